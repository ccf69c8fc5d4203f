/**
 * What an incremental window's group keeps of its first row (IncSpec.keep, plan-window.ts
 * groupColumns): only the columns read outside aggregate calls when the analysis can bound them,
 * the whole row otherwise (`*`, meta(), analytic functions, case-insensitive names) — and either
 * way the output is the buffered evaluator's, absent columns included, through a checkpoint too.
 */
import { describe, expect, test } from "bun:test";
import { StdoutSink } from "../../../lib/connectors/stdio/stdout.ts";
import { Tuple } from "../../../lib/expr/row.ts";
import { createFunctionRegistry } from "../../../lib/functions/index.ts";
import { planSelect, type PlanOptions } from "../../../lib/plan/plan.ts";
import { streamDef } from "../../../lib/plan/streams.ts";
import { Topology } from "../../../lib/runtime/topology.ts";
import { parseRuleFile } from "../../../lib/sql/parse.ts";
import { decodeState, encodeState } from "../../../lib/store/state-codec.ts";
import { UTC } from "../../../lib/value/time.ts";
import type { Obj } from "../../../lib/value/values.ts";
import { VirtualClock } from "../../../lib/ops/window/clock.ts";

const T0 = 1_700_000_000_000;

function planned(select: string, o: Partial<PlanOptions> = {}, at = T0) {
  const functions = createFunctionRegistry();
  const file = parseRuleFile(`CREATE STREAM s () WITH (FORMAT="JSON");\n${select}`, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const clock = new VirtualClock(at);
  const env = { now: () => clock.now(), zone: UTC, ruleId: "r", ruleStart: at };
  const plan = planSelect(file.select, defs, { env, zone: UTC, lateTolerance: 1000, isEventTime: false, functions, ...o }).plan;
  return { plan, clock };
}

function keepOf(select: string, o: Partial<PlanOptions> = {}): readonly string[] | null | undefined {
  const op = planned(select, o).plan.ops.find((x) => x.kind === "window");
  if (op?.kind !== "window" || !op.inc) throw new Error("not an incremental window");
  return op.inc.keep;
}

const rows: { data: Obj; meta: Obj | null }[] = [
  { data: { k: "a", x: 1, note: "first a", extra: { deep: [1, 2] } }, meta: { topic: "t/a" } },
  { data: { k: "b", x: 2 }, meta: { topic: "t/b" } },
  { data: { k: "a", x: 3, note: "second a" }, meta: { topic: "t/a2" } },
  { data: { x: 4, note: "no k" }, meta: null },
  { data: { k: "c", x: null, note: null }, meta: { topic: "t/c" } },
];

/** The rule's output over `rows` (two windows; with `restore`, a checkpoint taken in the second and restored into a new run). */
function output(select: string, evaluator: "auto" | "buffered", restore = false): string {
  let out = "";
  const run = (at: number) => {
    const { plan, clock } = planned(select, { windowEvaluator: evaluator }, at);
    const sink = new StdoutSink("rows", (t) => void (out += t), () => clock.now());
    const topo = new Topology(plan, { now: () => clock.now(), sendError: true, clock, zone: UTC }, [sink]);
    return { topo, clock, sink };
  };
  let r = run(T0);
  for (let w = 0; w < 2; w++) {
    rows.forEach((row, i) => {
      r.clock.advance(T0 + w * 1000 + i * 10 + 1);
      r.topo.ingest("s", new Tuple(row.data, row.meta, r.clock.now(), "s"));
    });
    if (restore && w === 1) {
      const saved = encodeState(r.topo.snapshot());
      r.sink.flush();
      r = run(r.clock.now());
      r.topo.restore(decodeState(saved) as Record<string, unknown>);
    }
    r.clock.advance(T0 + (w + 1) * 1000 + 1);
    r.sink.flush();
  }
  r.topo.end();
  r.sink.flush();
  return out;
}

const W = " GROUP BY k, TUMBLINGWINDOW(ss, 1)";

describe("the columns a group keeps", () => {
  test("the columns read outside aggregates, through aliases, HAVING and ORDER BY", () => {
    expect(keepOf("SELECT k, count(*) AS n, avg(x) AS ax FROM s" + W)).toEqual(["k"]);
    expect(keepOf("SELECT k, upper(note) AS u, sum(x) AS sx FROM s" + W + " HAVING sx > 0 ORDER BY extra->deep")).toEqual(["k", "note", "extra"]);
    expect(keepOf("SELECT count(*) AS n FROM s GROUP BY TUMBLINGWINDOW(ss, 1)")).toEqual([]);
    expect(keepOf("SELECT k AS key, window_end() AS we, max(x) AS mx FROM s" + W)).toEqual(["k"]);
  });

  test("the whole row when the analysis cannot bound it", () => {
    expect(keepOf("SELECT *, count(*) AS n FROM s" + W)).toBeNull();
    expect(keepOf("SELECT k, meta(topic) AS t, count(*) AS n FROM s" + W)).toBeNull();
    expect(keepOf("SELECT k, count(*) AS n FROM s" + W, { ignoreCase: true })).toBeNull();
    expect(keepOf("SELECT k, count(*) AS n FROM s" + W, { incrementalWindow: true })).toBeNull();
  });

  test.each([
    "SELECT k, note, count(*) AS n, max(x) AS mx FROM s",
    "SELECT note, k, collect(x) AS xs FROM s",
    "SELECT *, count(*) AS n FROM s",
    "SELECT k, meta(topic) AS t, meta(*) AS m, count(*) AS n FROM s",
    "SELECT k, extra->deep AS d, extra, count(*) AS n FROM s",
    "SELECT count(*) AS n, note FROM s",
  ])("%s emits what the buffered evaluator emits, and across a checkpoint", (select) => {
    const sql = select + W;
    const buffered = output(sql, "buffered");
    expect(buffered.split("\n").length).toBeGreaterThan(6);
    expect(output(sql, "auto")).toBe(buffered);
    expect(output(sql, "auto", true)).toBe(buffered);
  });
});
