/**
 * A processing-time pane (TUMBLINGWINDOW, SESSIONWINDOW) reopens a key's group for the next
 * window instead of building it anew (lib/ops/window/inc-groups.ts): the incremental evaluator must
 * still emit what the buffered one emits window after window — keys that stay away, keys that
 * come back, argument errors that belong to one window only — and what it emitted before must
 * stay as it was.
 */
import { describe, expect, test } from "bun:test";
import { RowError } from "../../../lib/errors.ts";
import { Emission, type Item } from "../../../lib/core/item.ts";
import { NodeMetrics } from "../../../lib/core/metrics.ts";
import type { SinkNode } from "../../../lib/core/sink.ts";
import { Tuple } from "../../../lib/expr/row.ts";
import { createFunctionRegistry } from "../../../lib/functions/index.ts";
import { planSelect } from "../../../lib/plan/plan.ts";
import { streamDef } from "../../../lib/plan/streams.ts";
import { Topology } from "../../../lib/runtime/topology.ts";
import { parseRuleFile } from "../../../lib/sql/parse.ts";
import { UTC } from "../../../lib/value/time.ts";
import type { Obj, Value } from "../../../lib/value/values.ts";
import { VirtualClock } from "../../../lib/ops/window/clock.ts";
import { prng } from "../../helpers/prng.ts";

const T0 = 1_700_000_000_000;

/** Keeps every emitted row, and how it printed when it arrived. */
class KeepingSink implements SinkNode {
  readonly metrics = [new NodeMetrics("sink", "keep")];
  readonly rows: Obj[] = [];
  readonly printed: string[] = [];
  push(item: Item): void {
    if (item instanceof RowError) this.printed.push(`error: ${item.message}`);
    if (!(item instanceof Emission)) return;
    for (const r of item.rows) {
      this.rows.push(r);
      this.printed.push(Bun.inspect(r));
    }
  }
  end(): void {}
}

type Row = { k: string; x: Value; d: bigint };

const SELECT = "SELECT k, x AS first_x, count(*) AS n, max(x) AS mx, sum(10 / d) AS q, collect(x) AS xs FROM s";

interface RunOptions {
  /** Virtual ms between two rows (default 100). */
  step?: number;
  /** OpEnv.turnMs: the projection may wait for later turns. */
  turnMs?: number;
  select?: string;
  /** The GROUP BY keys before the window (default `k`; empty: the window alone). */
  keys?: string;
  /** A HAVING clause after the GROUP BY. */
  having?: string;
  /** The rule's `enableIncrementalWindow`: eKuiper's inc_agg_window, whose WHERE filters the window's groups. */
  ekuiper?: boolean;
  /** Sees the sink before the end completes what waits. */
  before?: (s: KeepingSink) => void;
}

/** The rule's topology on a virtual clock, its sink, and how to feed it one row. */
function rule(window: string, evaluator: "auto" | "buffered", o: RunOptions) {
  const keys = o.keys ?? "k";
  const sql = `CREATE STREAM s () WITH (FORMAT="JSON");\n${o.select ?? SELECT} GROUP BY ${keys ? keys + ", " : ""}${window}${o.having ? " HAVING " + o.having : ""}`;
  const functions = createFunctionRegistry();
  const file = parseRuleFile(sql, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const clock = new VirtualClock(T0);
  const env = { now: () => clock.now(), zone: UTC, ruleId: "r", ruleStart: T0 };
  const plan = planSelect(file.select, defs, { env, zone: UTC, lateTolerance: 1000, isEventTime: false, windowEvaluator: evaluator, functions, incrementalWindow: o.ekuiper }).plan;
  const sink = new KeepingSink();
  const topo = new Topology(plan, { now: () => clock.now(), sendError: true, clock, zone: UTC, turnMs: o.turnMs }, [sink]);
  const step = o.step ?? 100;
  const feed = (r: Row, i: number) => {
    clock.advance(T0 + step * (i + 1));
    topo.ingest("s", new Tuple({ k: r.k, x: r.x, d: r.d }, null, clock.now(), "s"));
  };
  const finish = (n: number) => {
    clock.advance(T0 + step * n + 60_000);
    o.before?.(sink);
    topo.end();
    return sink;
  };
  return { topo, clock, sink, feed, finish };
}

/** The rule's output over `rows` with the given evaluator, fed in one go. */
function run(window: string, evaluator: "auto" | "buffered", rows: Row[], o: RunOptions = {}): KeepingSink {
  const r = rule(window, evaluator, o);
  rows.forEach(r.feed);
  return r.finish(rows.length);
}

/** The same, with the event loop running for `turns` turns after every `every` rows. */
async function runTurns(window: string, rows: Row[], every: number, turns: number, o: RunOptions): Promise<KeepingSink> {
  const r = rule(window, "auto", o);
  for (let i = 0; i < rows.length; i++) {
    r.feed(rows[i]!, i);
    if ((i + 1) % every === 0) for (let k = 0; k < turns; k++) await new Promise((res) => setImmediate(res));
  }
  return r.finish(rows.length);
}

/**
 * Keys drawn from a set that shifts every 40 rows; now and then a string `x` (max fails) or a
 * zero `d` (the argument of sum fails).
 */
function rows(seed: number, n: number): Row[] {
  const r = prng(seed);
  const out: Row[] = [];
  for (let i = 0; i < n; i++) {
    const base = Math.floor(i / 40) * 2;
    const k = `k${base + Math.floor(r() * 5)}`;
    const x: Value = r() < 0.01 ? "text" : r() < 0.1 ? null : Math.floor(r() * 100) / 4;
    out.push({ k, x, d: r() < 0.01 ? 0n : 2n });
  }
  return out;
}

describe("groups reopened for the next window", () => {
  test.each(["TUMBLINGWINDOW(ss, 1)", "SESSIONWINDOW(ss, 2, 1)"])("%s emits what the buffered evaluator emits", (window) => {
    for (const seed of [1, 2, 3]) {
      const input = rows(seed, 400);
      const inc = run(window, "auto", input);
      const buf = run(window, "buffered", input);
      expect(inc.printed.length).toBeGreaterThan(20);
      expect(inc.printed).toEqual(buf.printed);
    }
  });

  test("rows emitted for a window keep their values after the next windows", () => {
    const sink = run("TUMBLINGWINDOW(ss, 1)", "auto", rows(7, 400));
    expect(sink.rows.map((r) => Bun.inspect(r))).toEqual(sink.printed.filter((p) => !p.startsWith("error: ")));
  });
});

/** `n` rows over `keys` keys (a window of 1,000 rows holds about `keys` groups); one zero `d` at `zeroAt`. */
function manyKeys(seed: number, n: number, keys: number, zeroAt = -1): Row[] {
  const r = prng(seed);
  return Array.from({ length: n }, (_, i) => ({ k: `k${Math.floor(r() * keys)}`, x: Math.floor(r() * 100) / 4, d: i === zeroAt ? 0n : 2n }));
}

describe("a window projected across turns (OpEnv.turnMs)", () => {
  test.each(["TUMBLINGWINDOW(ss, 1)", "SESSIONWINDOW(ss, 2, 1)"])("%s emits what one pass emits while its keys come back meanwhile", async (window) => {
    for (const seed of [1, 2]) {
      // 1 row per ms: 1,000 rows and ~300 groups per window, above one slice of 64; with a zero
      // budget every window waits for later turns while the next windows reuse its keys.
      const input = manyKeys(seed, 6000, 300);
      let waiting = -1;
      const turned = run(window, "auto", input, { step: 1, turnMs: 0, before: (s) => (waiting = s.rows.length) });
      const once = run(window, "auto", input, { step: 1 });
      expect(once.rows.length).toBeGreaterThan(550); // two windows at least
      // Nothing had left the projection before the end completed it: it really waited.
      expect(waiting).toBe(0);
      expect(turned.printed).toEqual(once.printed);
      // With the loop running now and then: some windows are read before the next begins (their
      // groups are reopened), some are not (the next starts from fresh groups).
      const interleaved = await runTurns(window, input, 700, 3, { step: 1, turnMs: 0 });
      expect(interleaved.printed).toEqual(once.printed);
      // The buffered evaluator: its GROUP BY (AggregateOp) is spread across turns too.
      let groupingWaited = -1;
      const buffered = run(window, "buffered", input, { step: 1, turnMs: 0, before: (s) => (groupingWaited = s.rows.length) });
      expect(groupingWaited).toBe(0);
      expect(buffered.printed).toEqual(once.printed);
    }
  });

  test("a row failing past the first slice fails the whole window, as in one pass", () => {
    const select = "SELECT k, 10 / d AS q FROM s";
    // The zero sits in the first window's last rows: its group is projected well past slice one.
    const input = manyKeys(3, 3000, 300, 990);
    const turned = run("TUMBLINGWINDOW(ss, 1)", "auto", input, { step: 1, turnMs: 0, select });
    const once = run("TUMBLINGWINDOW(ss, 1)", "auto", input, { step: 1, select });
    expect(once.printed.filter((p) => p.startsWith("error: "))).toHaveLength(1);
    expect(turned.printed).toEqual(once.printed);
  });

  test("HAVING over a window's groups is filtered across turns too; a group failing it fails the window, as in one pass", () => {
    const input = manyKeys(5, 5000, 300);
    for (const having of ["count(*) > 3", "10 / (count(*) - 3) > 1"]) {
      const o = { step: 1, select: "SELECT k, count(*) AS n FROM s", having };
      const turned = run("TUMBLINGWINDOW(ss, 1)", "auto", input, { ...o, turnMs: 0 });
      const once = run("TUMBLINGWINDOW(ss, 1)", "auto", input, o);
      expect(once.printed.length).toBeGreaterThan(4);
      expect(turned.printed).toEqual(once.printed);
    }
  });

  test("WHERE over a window's groups (eKuiper's inc_agg_window) is filtered across turns too, with the output of one pass", () => {
    const input = manyKeys(6, 5000, 300);
    const o = { step: 1, select: "SELECT k, count(*) AS n, max(x) AS mx FROM s WHERE x > 12", ekuiper: true };
    let waiting = -1;
    const turned = run("TUMBLINGWINDOW(ss, 1)", "auto", input, { ...o, turnMs: 0, before: (s) => (waiting = s.rows.length) });
    const once = run("TUMBLINGWINDOW(ss, 1)", "auto", input, o);
    expect(waiting).toBe(0);
    expect(once.rows.length).toBeGreaterThan(500);
    expect(turned.printed).toEqual(once.printed);
  });

  test("rows an upstream node writes into on a later push (row_number() over overlapping windows) are projected in one pass", () => {
    const o = { step: 1, select: "SELECT k, x, row_number() AS rn FROM s", keys: "" };
    const input = manyKeys(4, 3000, 300);
    const turned = run("HOPPINGWINDOW(ss, 2, 1)", "auto", input, { ...o, turnMs: 0 });
    const once = run("HOPPINGWINDOW(ss, 2, 1)", "auto", input, o);
    expect(once.rows.length).toBeGreaterThan(3000);
    expect(turned.printed).toEqual(once.printed);
  });

  test("the items waiting behind it leave in order once the event loop has run", async () => {
    const { topo, clock, sink } = rule("TUMBLINGWINDOW(ss, 1)", "auto", { turnMs: 0, select: "SELECT k, count(*) AS n FROM s" });
    const windows: number[] = [];
    for (let w = 0; w < 3; w++) {
      for (let i = 0; i < 200; i++) topo.ingest("s", new Tuple({ k: `k${i}` }, null, clock.now(), "s"));
      clock.advance(T0 + 1000 * (w + 1));
    }
    expect(sink.rows).toHaveLength(0);
    for (let i = 0; i < 50 && sink.rows.length < 600; i++) {
      await new Promise((r) => setImmediate(r));
      windows.push(sink.rows.length);
    }
    // Three windows of 200 groups, each emitted whole (one emission at a time), in order.
    expect(sink.rows).toHaveLength(600);
    expect(windows.every((n) => n % 200 === 0)).toBe(true);
    expect(new Set(windows).size).toBeGreaterThan(2);
    // No snapshot inside a spread (a checkpoint waits for it): the topology is busy until the window's rows are projected in their turns.
    for (let i = 0; i < 200; i++) topo.ingest("s", new Tuple({ k: `k${i}` }, null, clock.now(), "s"));
    clock.advance(T0 + 4000);
    expect([sink.rows.length, topo.busy]).toEqual([600, true]);
    expect(() => topo.snapshot()).toThrow("a snapshot was asked while an operator spreads an item across turns");
    while (topo.busy) await new Promise((r) => setImmediate(r));
    expect(sink.rows).toHaveLength(800);
    expect(topo.snapshot()).toBeDefined();
    topo.end();
  });
});
