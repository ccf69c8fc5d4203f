/**
 * The file sink rolls by size in UTF-8 bytes (rules-and-sinks.md §11.2), though it only counts
 * characters when no rollingSize is set (lib/connectors/file/sink.ts).
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileSink } from "../../../lib/connectors/file/sink.ts";
import { SinkItem } from "../../../lib/sink/connector.ts";

test("rollingSize counts bytes: a 5-character, 10-byte row fills a 10-byte file", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "floe-file-roll-")), "out.txt");
  const sink = new FileSink({ path, rollingSize: 10, rollingCount: 0 });
  sink.send(new SinkItem("ééééé", null, 1));
  // The first file rolled at 10 bytes: the second row opens (and truncates) the path anew.
  sink.send(new SinkItem("üüüüü", null, 1));
  await sink.close();
  expect(readFileSync(path, "utf8")).toBe("üüüüü");
});

test("without rollingSize, rows of any width land in one file", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "floe-file-roll-")), "out.txt");
  const sink = new FileSink({ path, rollingCount: 0, rollingInterval: 3_600_000 });
  for (const r of ["ééééé", "üüüüü", "abc"]) sink.send(new SinkItem(r, null, 1));
  await sink.close();
  expect(readFileSync(path, "utf8")).toBe("ééééé\nüüüüü\nabc");
});
