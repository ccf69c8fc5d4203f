/**
 * A checkpoint that comes while an operator spreads a window's rows across turns (core/operator.ts
 * spreadRows): it does not finish the spread in its own task. It holds the input and waits for the
 * spread to end in its own slices, then snapshots, so what it stores is what a snapshot taken
 * after the spread holds, and the rule's output is what it is without checkpoints.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RowError } from "../../lib/errors.ts";
import { Emission, type Item } from "../../lib/core/item.ts";
import { NodeMetrics } from "../../lib/core/metrics.ts";
import type { SinkNode } from "../../lib/core/sink.ts";
import { Tuple } from "../../lib/expr/row.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { VirtualClock } from "../../lib/ops/window/clock.ts";
import { planSelect } from "../../lib/plan/plan.ts";
import { streamDef } from "../../lib/plan/streams.ts";
import { Checkpointer, type InputHold } from "../../lib/runtime/checkpoint.ts";
import { Topology } from "../../lib/runtime/topology.ts";
import { parseRuleFile } from "../../lib/sql/parse.ts";
import { checkpointStore } from "../../lib/store/checkpoint.ts";
import { decodeState, encodeState } from "../../lib/store/state-codec.ts";
import { UTC } from "../../lib/value/time.ts";
import type { Obj } from "../../lib/value/values.ts";
import { streams, testRuntime, waitFor } from "../helpers/runtime.ts";

const T0 = 1_700_000_000_000;
const N = 10_000;
const SQL = `CREATE STREAM s () WITH (FORMAT="JSON");\nSELECT k, count(*) AS n, sum(x) AS total FROM s GROUP BY k, TUMBLINGWINDOW(ss, 1)`;

class KeepingSink implements SinkNode {
  readonly metrics = [new NodeMetrics("sink", "keep")];
  readonly rows: Obj[] = [];
  push(item: Item): void {
    if (item instanceof RowError) throw new Error(item.message);
    if (item instanceof Emission) for (const r of item.rows) this.rows.push(r);
  }
  end(): void {}
}

/**
 * The rule on a virtual clock with a turn of 0 ms (one chunk of rows a turn): window 1 holds N
 * keys, and its firing leaves the grouping and the projection of its rows to later turns; a
 * row of window 2 follows, so the window holds state when the checkpoint is taken.
 */
function fired(): { topo: Topology; sink: KeepingSink } {
  const functions = createFunctionRegistry();
  const file = parseRuleFile(SQL, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const clock = new VirtualClock(T0);
  const env = { now: () => clock.now(), zone: UTC, ruleId: "r", ruleStart: T0 };
  const plan = planSelect(file.select, defs, { env, zone: UTC, lateTolerance: 1000, isEventTime: false, windowEvaluator: "buffered", functions }).plan;
  const sink = new KeepingSink();
  const topo = new Topology(plan, { now: () => clock.now(), sendError: true, clock, zone: UTC, turnMs: 0 }, [sink]);
  for (let i = 0; i < N; i++) topo.ingest("s", new Tuple({ k: `k${i}`, x: i }, null, clock.now(), "s"));
  clock.advance(T0 + 1500);
  topo.ingest("s", new Tuple({ k: "late", x: 1 }, null, clock.now(), "s"));
  return { topo, sink };
}

test("a checkpoint taken while a window's rows are spread across turns lets a 0 ms timer fire before the spread is done, and stores what the finished spread leaves", async () => {
  // The output of the rule with no checkpoint, its spread left to its slices.
  const plain = fired();
  await waitFor(() => plain.sink.rows.length === N, "the spread done without a checkpoint", 10_000, 1);
  const want = { rows: plain.sink.rows, state: encodeState(plain.topo.snapshot()) };

  const dir = mkdtempSync(join(tmpdir(), "floe-cp-spread-"));
  const store = checkpointStore(dir);
  const { topo, sink } = fired();
  expect(sink.rows.length).toBeLessThan(N);
  // A 0 ms timer armed as the first tick begins: it fires while the spread still runs.
  let timerSaw: number | undefined;
  let armed = false;
  const fence = () => {
    if (!armed) {
      armed = true;
      setTimeout(() => (timerSaw = sink.rows.length), 0);
    }
    return true;
  };
  const holds: string[] = [];
  const input: InputHold = { hold: () => void holds.push("hold"), release: () => void holds.push("release") };
  const cp = new Checkpointer("r", store, parseRuleFile(SQL, createFunctionRegistry()).select, "buffered", () => {}, fence, undefined, input);
  let stored: string | undefined;
  let rowsAtStore = -1;
  try {
    cp.start(1, topo, () => ({}), () => {
      if (stored !== undefined) return;
      stored = store.latest("r");
      rowsAtStore = sink.rows.length;
    });
    await waitFor(() => stored !== undefined && timerSaw !== undefined, "a checkpoint stored and the timer fired", 10_000, 1);
    expect(timerSaw!).toBeLessThan(N);
    // Stored once the spread was done, the input held meanwhile and let go after.
    expect(rowsAtStore).toBe(N);
    expect(holds).toEqual(["hold", "release"]);
    expect(sink.rows).toEqual(want.rows);
    expect(encodeState((decodeState(stored!) as { ops: unknown }).ops)).toBe(want.state);
  } finally {
    cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a qos 1 rule checkpointing every few ms through big windows' spreads takes its input again after each checkpoint, and loses none", async () => {
  const t = testRuntime();
  const defs = streams(`CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="spread/in")`);
  const totals = new Map<string, number>();
  t.env.pubsub.subscribe(
    "spread/out",
    (_t, rows) => {
      for (const r of (Array.isArray(rows) ? rows : [rows]) as { k: string; n: bigint }[]) totals.set(r.k, (totals.get(r.k) ?? 0) + Number(r.n));
      return true;
    },
    () => {},
  );
  const def = { id: "spread", sql: "SELECT k, count(*) AS n FROM m GROUP BY k, TUMBLINGWINDOW(ss, 1)", actions: [{ memory: { topic: "spread/out" } }], options: { qos: 1, checkpointInterval: 3 } };
  const run = await t.rule(def, defs).start();
  try {
    for (let i = 0; i < N; i++) await t.env.pubsub.publish("spread/in", { k: `k${i}` });
    await waitFor(() => totals.size === N, () => `every key out (${totals.size})`, 10_000, 5);
    // Input taken after the checkpoints that waited for those windows' spreads is windowed and sent too.
    for (let i = 0; i < 50; i++) await t.env.pubsub.publish("spread/in", { k: "after" });
    await waitFor(() => totals.get("after") === 50, "the later input out", 10_000, 5);
    expect([...totals.values()].reduce((a, b) => a + b, 0)).toBe(N + 50);
    expect(checkpointStore(t.env.dataDir).count("spread")).toBeGreaterThan(0);
  } finally {
    await run.stop();
  }
}, 30_000);
