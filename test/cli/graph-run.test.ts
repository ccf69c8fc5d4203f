/** `floe run rule.json` with a graph (graph-rules.md): the fixtures under fixtures/graph run from their folder. */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { floeRun, text } from "../helpers/source.ts";

const dir = join(import.meta.dir, "../../fixtures/graph");

async function run(file: string, extra: string[] = []) {
  const p = floeRun([file, ...extra], dir);
  const [out, err, code] = await Promise.all([text(p.stdout), text(p.stderr), p.exited]);
  return { rows: out.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, number>), err, code };
}

test("a linear graph rule prints its sink's rows", async () => {
  const r = await run("condition.json");
  expect(r.code).toBe(0);
  expect(r.rows.map((x) => x.humidity)).toEqual([40, 50, 90]);
  expect(r.rows[2]).toEqual({ humidity: 90, temp: 1 });
});

test("a switch graph prints what each of its sinks receives; the status names graph nodes", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "floe-graph-")), "status.json");
  const r = await run("switch.json", ["--no-actions", "--status", file]);
  expect(r.code).toBe(0);
  expect(r.rows.map((x) => x.temperature)).toEqual([80, 10, 12, 65, 55]);
  const status = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  expect(status["sink_hot_0_records_in_total"]).toBe(3);
  expect(status["sink_cold_0_records_in_total"]).toBe(2);
  expect(status["op_sw_0_records_in_total"]).toBe(10);
});

test("a count window grouped by device sums per group", async () => {
  const r = await run("count-window.json");
  expect(r.code).toBe(0);
  expect(r.rows).toEqual([{ device_id: 1, s: 80 }, { device_id: 2, s: 40 }, { device_id: 2, s: 50 }, { device_id: 1, s: 90 }, { device_id: 1, s: 125 }, { device_id: 2, s: 30 }]);
});
