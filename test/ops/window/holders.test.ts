/**
 * Window kinds (when a window fires) over their two holders (what it holds: rows, or the
 * accumulators of windows §9): the checkpoint format each combination stores, a checkpoint
 * written before the holders were split still restoring, and `close()` leaving no timer behind.
 */
import { createFunctionRegistry } from "../../../lib/functions/index.ts";
import { describe, expect, test } from "bun:test";
import { Tuple } from "../../../lib/expr/row.ts";
import { UTC } from "../../../lib/value/time.ts";
import { StdoutSink } from "../../../lib/connectors/stdio/stdout.ts";
import { planSelect } from "../../../lib/plan/plan.ts";
import { streamDef } from "../../../lib/plan/streams.ts";
import { Topology } from "../../../lib/runtime/topology.ts";
import { parseRuleFile } from "../../../lib/sql/parse.ts";
import { decodeState, encodeState } from "../../../lib/store/state-codec.ts";
import { VirtualClock } from "../../../lib/ops/window/clock.ts";

const T0 = 1_700_000_000_000;
type Evaluator = "auto" | "buffered";

interface Run {
  readonly clock: VirtualClock;
  readonly topo: Topology;
  readonly sink: StdoutSink;
  out: string;
}

function start(window: string, evaluator: Evaluator, at: number, eventTime = false): Run {
  const ts = eventTime ? ', TIMESTAMP="ts"' : "";
  const sql = `CREATE STREAM s () WITH (FORMAT="JSON"${ts});\nSELECT count(*) AS n, sum(x) AS sx FROM s GROUP BY ${window}`;
  const functions = createFunctionRegistry();
  const file = parseRuleFile(sql, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const clock = new VirtualClock(at);
  const env = { now: () => clock.now(), zone: UTC, ruleId: "r", ruleStart: at };
  const plan = planSelect(file.select, defs, { env, zone: UTC, lateTolerance: 1000, isEventTime: eventTime, windowEvaluator: evaluator, functions }).plan;
  const run = { clock, out: "" } as Run;
  const sink = new StdoutSink("array", (t) => void (run.out += t), () => clock.now());
  const topo = new Topology(plan, { now: () => clock.now(), sendError: true, clock, zone: UTC }, [sink]);
  return Object.assign(run, { topo, sink });
}

function feed(run: Run, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    run.clock.advance(T0 + 300 * (i + 1));
    run.topo.ingest("s", new Tuple({ x: i, ts: BigInt(run.clock.now()) }, null, run.clock.now(), "s"));
    run.sink.flush();
  }
}

/** The window operator's entry in a topology snapshot. */
function windowState(run: Run): Record<string, unknown> {
  const snap = run.topo.snapshot();
  const key = Object.keys(snap).find((k) => k.includes("window"))!;
  return snap[key] as Record<string, unknown>;
}

describe("checkpoint format per window kind and holder", () => {
  // The stored keys are the ones checkpoints had when each pair was its own class.
  const cases: [string, Evaluator, string[]][] = [
    ["TUMBLINGWINDOW(ss, 2)", "buffered", ["rows", "previous", "tick"]],
    ["TUMBLINGWINDOW(ss, 2)", "auto", ["table", "previous", "tick"]],
    ["HOPPINGWINDOW(ss, 3, 1)", "buffered", ["rows", "previous", "tick"]],
    ["HOPPINGWINDOW(ss, 3, 1)", "auto", ["open", "nextLeft", "lastTs", "previous", "tick"]],
    ["SESSIONWINDOW(ss, 5, 1)", "buffered", ["rows", "start", "timeout", "tick"]],
    ["SESSIONWINDOW(ss, 5, 1)", "auto", ["table", "start", "timeout", "tick"]],
    ["COUNTWINDOW(4, 3)", "buffered", ["rows", "count"]],
    ["COUNTWINDOW(4, 3)", "auto", ["open", "nextEnd", "count"]],
  ];
  test.each(cases)("%s (%s)", (window, evaluator, keys) => {
    const run = start(window, evaluator, T0);
    feed(run, 0, 5);
    expect(Object.keys(windowState(run)).sort()).toEqual([...keys].sort());
  });

  const eventTime: [string, Evaluator, string[], unknown][] = [
    ["TUMBLINGWINDOW(ss, 2)", "buffered", ["rows", "previous", "own"], "number"],
    ["TUMBLINGWINDOW(ss, 2)", "auto", ["pending", "previous", "own"], ["nextEnd", "open"]],
    ["HOPPINGWINDOW(ss, 3, 1)", "buffered", ["rows", "previous", "own"], "number"],
    ["HOPPINGWINDOW(ss, 3, 1)", "auto", ["pending", "previous", "own"], ["nextEnd", "open"]],
  ];
  test.each(eventTime)("%s (%s, event time)", (window, evaluator, keys, own) => {
    const run = start(window, evaluator, T0, true);
    feed(run, 0, 12);
    const st = windowState(run);
    expect(Object.keys(st).sort()).toEqual([...keys].sort());
    if (own === "number") expect(typeof st.own).toBe("number");
    else expect(Object.keys(st.own as object).sort()).toEqual(own as string[]);
  });
});

describe("a buffered COUNTWINDOW checkpoint from before the split (count kept modulo m)", () => {
  test.each([7, 8, 10])("restores after %i rows to the uninterrupted output", (cut) => {
    const whole = start("COUNTWINDOW(4, 3)", "buffered", T0);
    feed(whole, 0, 20);
    const first = start("COUNTWINDOW(4, 3)", "buffered", T0);
    feed(first, 0, cut);
    const snap = first.topo.snapshot();
    const key = Object.keys(snap).find((k) => k.includes("window"))!;
    const st = snap[key] as { count: number };
    expect(st.count).toBe(cut);
    snap[key] = { ...st, count: cut % 3 };
    const second = start("COUNTWINDOW(4, 3)", "buffered", first.clock.now());
    second.topo.restore(decodeState(encodeState(snap)) as Record<string, unknown>);
    feed(second, cut, 20);
    expect(whole.out.trim().split("\n").length).toBe(5); // rows 6, 9, 12, 15, 18
    expect(first.out + second.out).toBe(whole.out);
  });
});

describe("close() at the end of the topology", () => {
  const kinds = ["TUMBLINGWINDOW(ss, 2)", "HOPPINGWINDOW(ss, 3, 1)", "SESSIONWINDOW(ss, 5, 1)", "SLIDINGWINDOW(ss, 2, 1)"];
  for (const evaluator of ["auto", "buffered"] as const) {
    test.each(kinds)(`%s (${evaluator}) leaves no timer on the clock`, (window) => {
      const run = start(window, evaluator, T0);
      feed(run, 0, 5);
      expect(run.clock.nextTimer()).toBeDefined();
      run.topo.end();
      expect(run.clock.nextTimer()).toBeUndefined();
      const before = run.out;
      run.clock.advance(T0 + 60_000);
      run.sink.flush();
      expect(run.out).toBe(before);
    });
  }
});
