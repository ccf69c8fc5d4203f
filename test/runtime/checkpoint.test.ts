/**
 * Rule checkpoints (rules-and-sinks.md §5): a rule stopped after a checkpoint and started again
 * from it emits exactly what one uninterrupted run emits — for every window kind on both
 * evaluators, analytic functions and event time. Rules are driven on a virtual clock.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { Tuple } from "../../lib/expr/row.ts";
import { DateTime, Duration, FixedZone, UTC } from "../../lib/value/time.ts";
import type { Obj } from "../../lib/value/values.ts";
import { StdoutSink } from "../../lib/connectors/stdio/stdout.ts";
import { planSelect } from "../../lib/plan/plan.ts";
import { streamDef } from "../../lib/plan/streams.ts";
import { Topology } from "../../lib/runtime/topology.ts";
import { parseRuleFile } from "../../lib/sql/parse.ts";
import { checkpointStore, KEEP_CHECKPOINTS } from "../../lib/store/checkpoint.ts";
import { decodeState, encodeState } from "../../lib/store/state-codec.ts";
import { VirtualClock } from "../../lib/ops/window/clock.ts";
import { metric, streams, testRuntime, waitFor } from "../helpers/runtime.ts";

const functions = createFunctionRegistry();

const T0 = 1_700_000_000_000;

interface Rec {
  readonly at: number;
  readonly data: Obj;
}

/** Deterministic records: arrival gaps of 0–900 ms with a few long silences, int64 and float values. */
function records(n: number, eventTime: boolean): Rec[] {
  const out: Rec[] = [];
  let t = T0 + 137;
  let seed = 12345;
  const r = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let i = 0; i < n; i++) {
    t += r() < 0.05 ? 2500 + Math.floor(r() * 3000) : Math.floor(r() * 900);
    const ts = eventTime ? t + Math.floor((r() - 0.7) * 1500) : t;
    // int64 values beyond 2^53 must survive the checkpoint exactly.
    out.push({ at: t, data: { k: BigInt(i % 3), x: 9007199254740993n + BigInt(i), f: i * 0.25, ok: i % 4 !== 1, ts: BigInt(ts) } });
  }
  return out;
}

interface Run {
  readonly clock: VirtualClock;
  readonly topo: Topology;
  readonly sink: StdoutSink;
  out: string;
}

function start(sql: string, options: { isEventTime?: boolean; windowEvaluator?: "buffered" }, at: number): Run {
  const file = parseRuleFile(sql, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const clock = new VirtualClock(at);
  const env = { now: () => clock.now(), zone: UTC, ruleId: "r", ruleStart: at };
  const plan = planSelect(file.select, defs, { functions, env, zone: UTC, lateTolerance: 1000, isEventTime: options.isEventTime, windowEvaluator: options.windowEvaluator }).plan;
  const run = { clock, out: "" } as Run & { out: string };
  const sink = new StdoutSink("array", (t) => void (run.out += t), () => clock.now());
  const topo = new Topology(plan, { now: () => clock.now(), sendError: true, clock, zone: UTC }, [sink]);
  return Object.assign(run, { topo, sink });
}

function feed(run: Run, recs: readonly Rec[]): void {
  for (const r of recs) {
    run.clock.advance(r.at);
    run.topo.ingest("s", new Tuple({ ...r.data }, null, run.clock.now(), "s"));
    run.sink.flush();
  }
}

function finish(run: Run, until: number): string {
  run.clock.advance(until);
  run.sink.flush();
  return run.out;
}

const STREAM = (eventTime: boolean) => `CREATE STREAM s () WITH (FORMAT="JSON"${eventTime ? ', TIMESTAMP="ts"' : ""});\n`;

/** Uninterrupted output, and the output of runs stopped after a checkpoint at each of `cuts`. */
function compare(select: string, options: { isEventTime?: boolean; windowEvaluator?: "buffered" }, n = 120): void {
  const sql = STREAM(!!options.isEventTime) + select;
  const recs = records(n, !!options.isEventTime);
  const end = recs[recs.length - 1]!.at + 20_000;
  const whole = start(sql, options, T0);
  feed(whole, recs);
  const want = finish(whole, end);
  expect(want.split("\n").length).toBeGreaterThan(3);
  for (const cut of [7, Math.floor(n / 2) + 1, n - 3]) {
    const first = start(sql, options, T0);
    feed(first, recs.slice(0, cut));
    const saved = encodeState(first.topo.snapshot());
    first.clock.advance(first.clock.now()); // nothing due fires twice: the run just stops here
    const second = start(sql, options, first.clock.now());
    second.topo.restore(decodeState(saved) as Record<string, unknown>);
    feed(second, recs.slice(cut));
    const got = first.out + finish(second, end);
    if (got !== want) throw new Error(`cut at ${cut}: ${select}\nwant ${want}\ngot  ${got}`);
  }
}

const WINDOWS = [
  "TUMBLINGWINDOW(ss, 2)",
  "HOPPINGWINDOW(ss, 3, 1)",
  "SESSIONWINDOW(ss, 5, 1)",
  "COUNTWINDOW(5)",
  "COUNTWINDOW(4, 3)",
];

describe("a restored rule continues exactly where it stopped", () => {
  for (const evaluator of ["auto", "buffered"] as const) {
    const o = evaluator === "buffered" ? { windowEvaluator: "buffered" as const } : {};
    test.each(WINDOWS)(`processing time, ${evaluator}: %s`, (w) => {
      compare(`SELECT k, count(*) AS n, sum(x) AS sx, avg(f) AS af, max(x) AS mx, collect(f) AS c, last_value(x, true) AS lv, window_start() AS ws, window_end() AS we FROM s GROUP BY k, ${w}`, o);
    });
    test.each(["TUMBLINGWINDOW(ss, 2)", "HOPPINGWINDOW(ss, 3, 1)", "SESSIONWINDOW(ss, 5, 1)"])(`event time, ${evaluator}: %s`, (w) => {
      compare(`SELECT k, count(*) AS n, sum(x) AS sx, merge_agg(s) AS m, window_start() AS ws, window_end() AS we FROM s GROUP BY k, ${w}`, { ...o, isEventTime: true });
    });
  }

  test("sliding windows, with and without delay, with a trigger condition", () => {
    compare("SELECT count(*) AS n, sum(x) AS sx FROM s GROUP BY SLIDINGWINDOW(ss, 2) OVER (WHEN ok)", {});
    compare("SELECT count(*) AS n, collect(x) AS c FROM s GROUP BY SLIDINGWINDOW(ss, 2, 1) OVER (WHEN ok)", {});
    compare("SELECT count(*) AS n, collect(x) AS c FROM s GROUP BY SLIDINGWINDOW(ss, 2, 1) OVER (WHEN ok)", { isEventTime: true });
  });

  test("state windows keep their partitions", () => {
    compare("SELECT k, count(*) AS n, collect(x) AS c FROM s GROUP BY STATEWINDOW(ok, ok = false) OVER (PARTITION BY k)", {});
  });

  test("analytic functions keep their state per partition", () => {
    compare(
      "SELECT x, lag(x, 2, 0) OVER (PARTITION BY k) AS l, latest(f) AS lt, changed_col(true, k) AS cc, had_changed(true, k, ok) AS hc, acc_sum(f) OVER (PARTITION BY k) AS acc, acc_count(x, ok, ok = false) AS ac FROM s",
      {},
    );
  });

  test("the watermark keeps its held rows and per-stream maxima (event time, no window)", () => {
    compare("SELECT x, ts FROM s", { isEventTime: true });
  });
});

test("the state codec round-trips what JSON cannot say", () => {
  const t = new Tuple({ a: 1n << 62n, b: -0, c: NaN }, { file: "x" }, 5, "s");
  t.cache = [undefined as never, 3n];
  const v = {
    i: -9223372036854775808n,
    f: [Infinity, -Infinity, -0, 0.1],
    b: new Uint8Array([0, 255]),
    dt: new DateTime(T0, 123, new FixedZone("", 3600)),
    dtu: new DateTime(T0, 0, UTC),
    d: new Duration(1500000000n),
    holes: [1, undefined, 3],
    t,
    proto: JSON.parse('{"__proto__": 1}') as unknown,
  };
  const back = decodeState(encodeState(v)) as typeof v;
  expect(back.i).toBe(-9223372036854775808n);
  expect(Object.is(back.f[2], -0)).toBe(true);
  expect(back.f.slice(0, 2)).toEqual([Infinity, -Infinity]);
  expect([...back.b]).toEqual([0, 255]);
  expect(back.dt.ms).toBe(T0);
  expect(back.dt.ns).toBe(123);
  expect(back.dt.zone.offsetAt(T0)).toBe(3600);
  expect(back.dtu.zone.name).toBe("UTC");
  expect(back.d.ns).toBe(1500000000n);
  expect(back.holes[1]).toBeUndefined();
  expect(back.t).toBeInstanceOf(Tuple);
  expect(back.t.data.a).toBe(1n << 62n);
  expect(Number.isNaN(back.t.data.c as number)).toBe(true);
  expect(back.t.cache![1]).toBe(3n);
  expect(Object.keys(back.proto as object)).toEqual(["__proto__"]);
});

test("the store keeps the last 3 complete checkpoints per rule and deletes them with the rule", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-ckpt-"));
  const store = checkpointStore(dir);
  for (let i = 1; i <= 5; i++) store.save("r1", `{"n":${i}}`, i);
  store.save("r2", "{}", 1);
  expect(store.count("r1")).toBe(KEEP_CHECKPOINTS);
  expect(store.latest("r1")).toBe('{"n":5}');
  store.clear("r1");
  expect(store.latest("r1")).toBeUndefined();
  expect(store.latest("r2")).toBe("{}");
});

describe("rule runs", () => {
  const defs = streams(`CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="ck/in")`);
  async function stopAndRestart(id: string, options: Record<string, unknown>): Promise<{ saved: number; out: unknown[] }> {
    const t = testRuntime();
    const def = { id, sql: "SELECT collect(n) AS ns FROM m GROUP BY COUNTWINDOW(3)", actions: [{ nop: {} }], options };
    const rule = await t.rule(def, defs).start();
    await t.env.pubsub.publish("ck/in", { n: 1 });
    await t.env.pubsub.publish("ck/in", { n: 2 });
    await waitFor(() => metric(rule, "op_2_window_0_records_in_total") === 2, "two rows in the window");
    await rule.stop();
    const saved = checkpointStore(t.env.dataDir).count(id);
    const again = await t.rule(def, defs).start();
    await t.env.pubsub.publish("ck/in", { n: 3 });
    await waitFor(() => metric(again, "op_2_window_0_records_in_total") === 1, "the third row");
    const emitted = metric(again, "op_2_window_0_records_out_total");
    await again.stop();
    return { saved, out: [emitted] };
  }

  test("enableSaveStateBeforeStop checkpoints at stop and the next start restores it", async () => {
    const r = await stopAndRestart("ck1", { qos: 1, checkpointInterval: "1h", enableSaveStateBeforeStop: true });
    expect(r.saved).toBe(1);
    expect(r.out).toEqual([1]);
  });

  test("qos 0 saves nothing", async () => {
    const r = await stopAndRestart("ck0", { qos: 0, enableSaveStateBeforeStop: true });
    expect(r.saved).toBe(0);
    expect(r.out).toEqual([0]);
  });
});
