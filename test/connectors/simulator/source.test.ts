/**
 * The simulator source (rules-and-sinks.md §11.10), shared with trial runs' mockSource: a row per
 * pull (first at start), loop, EOF without loop (the rule ends `done`), interval 0, backpressure.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Obj } from "../../../lib/value/values.ts";
import { SimulatorSource } from "../../../lib/connectors/simulator/source.ts";
import { floeRun, openOn, rowsOf, text } from "../../helpers/source.ts";
import { waitFor } from "../../helpers/runtime.ts";

const data = [{ a: 1 }, { a: 2.5 }, { a: 3 }];
/** The rows as the source admits them: whole numbers are int64. */
const want = [{ a: 1n }, { a: 2.5 }, { a: 3n }];

test("a simulator stream without loop emits its rows and the rule ends done (`floe run`)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-sim-"));
  const extra = JSON.stringify({ data: [{ t: 20 }, { t: 21.5 }, { t: 23 }], interval: "10ms", loop: false }).replace(/"/g, '\\"');
  writeFileSync(join(dir, "r.sql"), `CREATE STREAM sim () WITH (TYPE="simulator", EXTRA="${extra}");\nSELECT t FROM sim WHERE t > 20`);
  const p = floeRun([join(dir, "r.sql"), "--status", join(dir, "st.json")], dir);
  const [out, err, code] = await Promise.all([text(p.stdout), text(p.stderr), p.exited]);
  expect(err).toBe("");
  expect(code).toBe(0);
  expect(out).toBe('{"t":21.5}\n{"t":23}\n');
  const st = JSON.parse(await Bun.file(join(dir, "st.json")).text()) as Record<string, unknown>;
  expect(st.message).toBe("done");
  expect(st.source_sim_0_records_in_total).toBe(3);
}, 20_000);

test("the first row is pulled at start, then one per interval; ints stay ints", async () => {
  const src = new SimulatorSource({ data, interval: "60ms", loop: false });
  const p = await openOn(src);
  expect(rowsOf(p.take())).toEqual([want[0]!]);
  await waitFor(p.eof, "eof");
  expect(rowsOf(p.take())).toEqual(want.slice(1));
});

test("loop restarts after the last row and never ends", async () => {
  const src = new SimulatorSource({ data, interval: 5, loop: true });
  const p = await openOn(src);
  const got: Obj[] = [];
  await waitFor(() => (got.push(...rowsOf(p.take())), got.length >= 7), "seven rows");
  src.close();
  expect(got.slice(0, 7).map((r) => r.a)).toEqual([1n, 2.5, 3n, 1n, 2.5, 3n, 1n]);
  expect(p.eof()).toBe(false);
});

test("interval 0 emits only the first row", async () => {
  const p = await openOn(new SimulatorSource({ data, interval: 0, loop: false }));
  await waitFor(() => p.sub.length > 0, "the first row");
  // A fixed wait, to show that no second row follows.
  await Bun.sleep(50);
  expect(rowsOf(p.take())).toEqual([want[0]!]);
  expect(p.eof()).toBe(false);
});

test("a refused row is offered again when the bus drains: nothing lost, nothing read ahead", async () => {
  const src = new SimulatorSource({ data, interval: 5, loop: false });
  const p = await openOn(src, 1);
  await waitFor(() => p.bus.refusals > 0, "the full bus to refuse a row");
  // A fixed wait over several intervals, to show that nothing is read ahead while the bus is full.
  await Bun.sleep(40);
  expect(p.sub.length).toBe(1);
  const got: Obj[] = [];
  await waitFor(() => (got.push(...rowsOf(p.take())), p.eof() && p.sub.length === 0), "eof");
  got.push(...rowsOf(p.take()));
  expect(got).toEqual(want);
});

test("data must be an array of objects", () => {
  expect(() => new SimulatorSource({ data: [1] })).toThrow("data must be an array of objects");
  expect(() => new SimulatorSource({ data, interval: "x" })).toThrow('time: invalid duration "x"');
});
