/**
 * The daemon's rule state machine (server/lifecycle.ts) over the real runtime's run handles: the
 * one owner of states and last wills, of restarts, and of the metrics and topology kept after a
 * run (rest-api.md §6.1–§7).
 */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { RuleLifecycle, type RunFactory } from "../../lib/server/lifecycle.ts";
import { parseStoredRule, type StoredRule } from "../../lib/store/stored-rule.ts";
import type { StreamDef } from "../../lib/plan/streams.ts";
import { streams, testRuntime, waitFor, type TestRuntime } from "../helpers/runtime.ts";

const functions = createFunctionRegistry();

function def(id: string, sql: string, actions: unknown[] = [{ nop: {} }]): StoredRule {
  return parseStoredRule(JSON.stringify({ id, sql, actions }), functions, {});
}

/** What server/runtime-bridge.ts does: a rule validated afresh per run, its handle given to the lifecycle. */
function factory(t: TestRuntime, defs: Map<string, StreamDef>): RunFactory {
  return (d, onExit) => t.rule({ id: d.id, sql: d.sql, actions: d.actions, options: d.options.raw }, defs).start(onExit);
}

function metric(lc: RuleLifecycle, key: string): number | string | undefined {
  for (const n of lc.nodes()) for (const [k, v] of n.entries()) if (k === key) return v;
  return undefined;
}

const defs = streams(`CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="lcrun/in")`);

test("states and last wills; the last run's metrics and topology stay after a stop", async () => {
  const t = testRuntime();
  const lc = new RuleLifecycle(def("r1", "SELECT n FROM m"), factory(t, defs), () => {});
  expect([lc.state, lc.message, lc.lastStartTimestamp, lc.lastStopTimestamp, lc.lastTopo, lc.nodes()]).toEqual(["stopped", "", 0, 0, undefined, []]);
  await lc.startNow();
  expect([lc.state, lc.message]).toEqual(["running", ""]);
  expect(lc.lastTopo!.sources).toEqual(["source_m"]);
  await t.env.pubsub.publish("lcrun/in", { n: 1 });
  await waitFor(() => metric(lc, "sink_nop_0_0_records_out_total") === 1, "one out");
  await lc.stop();
  expect([lc.state, lc.message]).toEqual(["stopped", "canceled manually"]);
  expect(lc.lastStopTimestamp).toBeGreaterThan(0);
  expect(metric(lc, "sink_nop_0_0_records_out_total")).toBe(1);
});

test("starting a running rule restarts it, and metrics start from zero", async () => {
  const t = testRuntime();
  const lc = new RuleLifecycle(def("r2", "SELECT n FROM m"), factory(t, defs), () => {});
  await lc.startNow();
  await t.env.pubsub.publish("lcrun/in", { n: 1 });
  await waitFor(() => metric(lc, "sink_nop_0_0_records_out_total") === 1, "one out");
  await lc.startNow();
  expect(lc.state).toBe("running");
  expect(metric(lc, "sink_nop_0_0_records_out_total")).toBe(0);
  await lc.stop();
});

test("a failing start is `stopped by error` with the runtime's text", async () => {
  const t = testRuntime();
  const bad = streams(`CREATE STREAM demo () WITH (TYPE="memory", DATASOURCE="lcrun/demo")`, `CREATE TABLE t () WITH (TYPE="nosuch", KIND="lookup")`);
  const lc = new RuleLifecycle(def("r3", "SELECT * FROM demo INNER JOIN t ON demo.id = t.id"), factory(t, bad), () => {});
  await lc.startNow();
  expect([lc.state, lc.message]).toEqual(["stopped by error", "lookup source type nosuch is not supported"]);
});

test("a run that reaches the end of its input stops the rule with `done` and tells the owner", async () => {
  const t = testRuntime();
  const dir = mkdtempSync(join(tmpdir(), "floe-lc-eof-"));
  writeFileSync(join(dir, "in.json"), '[{"n":1},{"n":2}]');
  const files = streams(`CREATE STREAM f () WITH (TYPE="file", DATASOURCE="in.json", EXTRA="{\\"path\\":\\"${dir}\\"}")`);
  let eof = "";
  const lc = new RuleLifecycle(def("r4", "SELECT n FROM f"), factory(t, files), (id) => (eof = id));
  await lc.startNow();
  await waitFor(() => eof !== "", "the end of the file");
  await lc.settled();
  expect([lc.state, lc.message]).toEqual(["stopped", "done"]);
  expect(metric(lc, "sink_nop_0_0_records_out_total")).toBe(2);
});
