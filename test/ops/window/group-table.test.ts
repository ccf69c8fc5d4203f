/**
 * A pane's group table (lib/ops/window/inc-groups.ts) keeps the groups of earlier windows for
 * the keys that come back, and lets them go when they do not: a window that meets new keys only
 * (a million devices, each met once in a while) must not hold the windows before it.
 */
import { describe, expect, test } from "bun:test";
import { Tuple, type Row } from "../../../lib/expr/row.ts";
import { GroupTable } from "../../../lib/ops/window/inc-groups.ts";
import { RowEval } from "../../../lib/ops/window/row-eval.ts";
import type { IncSpec } from "../../../lib/plan/window-spec.ts";
import { StdoutSink } from "../../../lib/connectors/stdio/stdout.ts";
import { createFunctionRegistry } from "../../../lib/functions/index.ts";
import { planSelect } from "../../../lib/plan/plan.ts";
import { streamDef } from "../../../lib/plan/streams.ts";
import { Topology } from "../../../lib/runtime/topology.ts";
import { parseRuleFile } from "../../../lib/sql/parse.ts";
import { UTC } from "../../../lib/value/time.ts";
import { VirtualClock } from "../../../lib/ops/window/clock.ts";

/** GROUP BY k, no aggregate: a group per key. */
const spec: IncSpec = { aggs: [], dims: [(r: Row) => r.value("k", undefined)], where: undefined, ekuiper: false };

/** Folds one row per key of `keys` into `table`; its groups in emission order. */
function fill(table: GroupTable, keys: string[]): Row[] {
  const ev = new RowEval(spec);
  for (const k of keys) {
    const t = new Tuple({ k }, null, 1, "s");
    ev.evaluate(t);
    table.add(t, ev);
  }
  return table.collection({ start: 0, end: 1, trigger: 1 }).groups!;
}

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe("the key index across windows", () => {
  test("keys that come back reopen their groups; the index holds one window's keys", () => {
    const first = new GroupTable(spec);
    const a = fill(first, keys("k", 3000));
    const second = first.next();
    const b = fill(second, keys("k", 3000));
    expect(b).toHaveLength(3000);
    expect(b.every((g, i) => g === a[i])).toBe(true);
    expect(second.indexed).toBe(3000);
  });

  test("a window of new keys lets the earlier windows' groups go once it has placed its first 1,024", () => {
    let table = new GroupTable(spec);
    fill(table, keys("a", 3000));
    for (const prefix of ["b", "c", "d"]) {
      table = table.next();
      const ev = new RowEval(spec);
      const add = (k: string) => {
        const t = new Tuple({ k }, null, 1, "s");
        ev.evaluate(t);
        table.add(t, ev);
      };
      for (let i = 0; i < 1023; i++) add(`${prefix}${i}`);
      expect(table.indexed).toBe(3000 + 1023); // still held: not judged yet
      add(`${prefix}1023`);
      expect(table.indexed).toBe(1024);
      for (let i = 1024; i < 3000; i++) add(`${prefix}${i}`);
      expect(table.indexed).toBe(3000);
      expect(table.collection({ start: 0, end: 1, trigger: 1 }).groups!.map((g) => g.value("k", undefined))).toEqual(keys(prefix, 3000));
    }
  });

  test("keys that partly come back keep the index (the earlier groups stay for reuse)", () => {
    const first = new GroupTable(spec);
    fill(first, keys("k", 2000));
    const second = first.next();
    // Every other key comes back: half of the first 1,024 are reopened.
    const mixed = keys("k", 2000).map((k, i) => (i % 2 ? `n${i}` : k));
    fill(second, mixed);
    expect(second.indexed).toBe(3000);
  });
});

/** A rule's output over windows of `perWindow` rows, window w's keys from `keyOf(w, i)`. */
function ruleOutput(evaluator: "auto" | "buffered", windows: number, perWindow: number, keyOf: (w: number, i: number) => string): string {
  const T0 = 1_700_000_000_000;
  const functions = createFunctionRegistry();
  const sql = `CREATE STREAM s () WITH (FORMAT="JSON");\nSELECT k, count(*) AS n, avg(x) AS ax, max(x) AS mx, collect(x) AS xs FROM s GROUP BY k, TUMBLINGWINDOW(ss, 1)`;
  const file = parseRuleFile(sql, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const clock = new VirtualClock(T0);
  const env = { now: () => clock.now(), zone: UTC, ruleId: "r", ruleStart: T0 };
  const plan = planSelect(file.select, defs, { env, zone: UTC, isEventTime: false, windowEvaluator: evaluator, functions }).plan;
  let out = "";
  const sink = new StdoutSink("rows", (t) => void (out += t), () => clock.now());
  const topo = new Topology(plan, { now: () => clock.now(), sendError: true, clock, zone: UTC }, [sink]);
  for (let w = 0; w < windows; w++) {
    for (let i = 0; i < perWindow; i++) {
      clock.advance(T0 + w * 1000 + Math.floor((i * 900) / perWindow) + 1);
      // Each key twice in its window; one key in seven with int64 values (avg and max off the float path).
      const j = i % (perWindow / 2);
      topo.ingest("s", new Tuple({ k: keyOf(w, j), x: j % 7 === 0 ? BigInt(i) : i / 8 }, null, clock.now(), "s"));
    }
    clock.advance(T0 + (w + 1) * 1000 + 1);
  }
  topo.end();
  sink.flush();
  return out;
}

describe("aggregates of groups the index keeps when it lets the others go", () => {
  test("a window whose keys come back for one in ten emits what the buffered evaluator emits", () => {
    // 1,500 keys a window; a tenth of them the previous window's: the index starts over at the
    // 1,024th group and moves the groups met so far (their aggregates) into fresh columns.
    const keyOf = (w: number, i: number) => (i % 10 === 0 ? `back${i}` : `k${w}_${i}`);
    const inc = ruleOutput("auto", 4, 3000, keyOf);
    expect(inc.trim().split("\n")).toHaveLength(4 * 1500);
    expect(inc).toBe(ruleOutput("buffered", 4, 3000, keyOf));
  });
});
