/** eKuiper's rotating stream.log: a symlink to the current timestamped file, rotation by size and time, pruning by count or age. */
import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RotatingLog } from "../lib/log-file.ts";

const HOUR = 3_600_000;
const logs = (dir: string) => readdirSync(dir).filter((f) => f !== "stream.log").sort();

test("stream.log links to the current file; a new file starts when the size would pass rotateSize", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-log-"));
  let now = Date.UTC(2026, 0, 1, 10, 0, 0);
  const log = new RotatingLog({ dir, rotateTimeHours: 0, rotateSize: 100, rotateCount: 0, maxAgeHours: 0, now: () => now });
  log.write("a".repeat(60) + "\n");
  log.write("b".repeat(60) + "\n");
  now += 1000;
  log.write("c".repeat(60) + "\n");
  expect(logs(dir)).toHaveLength(3);
  expect(readFileSync(join(dir, "stream.log"), "utf8")).toBe("c".repeat(60) + "\n");
  expect(join(dir, readlinkSync(join(dir, "stream.log")))).toBe(log.current);
  log.close();
});

test("a new file every rotateTime hours; rotateCount keeps the newest files", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-log-"));
  let now = Date.UTC(2026, 0, 1, 10, 30, 0);
  const log = new RotatingLog({ dir, rotateTimeHours: 1, rotateSize: 0, rotateCount: 2, maxAgeHours: 0, now: () => now });
  log.write("first\n");
  now += 10 * 60_000;
  log.write("same hour\n");
  expect(logs(dir)).toHaveLength(1);
  now += HOUR;
  log.write("next hour\n");
  now += HOUR;
  log.write("third\n");
  expect(logs(dir)).toHaveLength(2);
  expect(readFileSync(join(dir, "stream.log"), "utf8")).toBe("third\n");
  log.close();
});

test("without rotateCount, files older than maxAge hours are removed", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-log-"));
  let now = Date.now();
  const log = new RotatingLog({ dir, rotateTimeHours: 1, rotateSize: 0, rotateCount: 0, maxAgeHours: 2, now: () => now });
  log.write("old\n");
  const first = log.current;
  utimesSync(first, new Date(now - 3 * HOUR), new Date(now - 3 * HOUR));
  now += HOUR;
  log.write("new\n");
  expect(logs(dir)).toEqual([log.current.slice(dir.length + 1)]);
  log.close();
});
