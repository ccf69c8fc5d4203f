/**
 * Which evaluator the planner gives a windowed rule (lib/plan/plan-window.ts, windows §9), and
 * eKuiper's opt-in `inc_agg_window` plan shape.
 */
import { describe, expect, test } from "bun:test";
import { createFunctionRegistry } from "../../../lib/functions/index.ts";
import { UTC } from "../../../lib/value/time.ts";
import { planSelect, type PlanOptions } from "../../../lib/plan/plan.ts";
import { windowEvaluatorOf } from "../../../lib/plan/plan-window.ts";
import { streamDef } from "../../../lib/plan/streams.ts";
import { parseRuleFile } from "../../../lib/sql/parse.ts";

const functions = createFunctionRegistry();

const STREAMS = `
CREATE STREAM demo (color STRING, size BIGINT, ts BIGINT) WITH (FORMAT="JSON", TIMESTAMP="ts");
CREATE STREAM demo1 (temp FLOAT, hum BIGINT, ts BIGINT) WITH (FORMAT="JSON");
`;

function plan(select: string, options: Partial<PlanOptions> = {}) {
  const file = parseRuleFile(STREAMS + select, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  return planSelect(file.select, defs, { functions, env: { now: () => 0, zone: UTC, ruleId: "r", ruleStart: 0 }, zone: UTC, ...options }).plan;
}

const evaluator = (select: string, options: Partial<PlanOptions> = {}): string | undefined => windowEvaluatorOf(plan(select, options))?.evaluator;

describe("floe's evaluator choice", () => {
  test.each([
    ["SELECT color, count(*) AS c, avg(size), min(size), max(size), sum(size) FROM demo GROUP BY color, TUMBLINGWINDOW(ss, 10)", "incremental"],
    ["SELECT collect(color), merge_agg(demo.*), last_value(size, true) FROM demo GROUP BY HOPPINGWINDOW(ss, 10, 5)", "incremental"],
    ["SELECT count(*) FROM demo GROUP BY SESSIONWINDOW(ss, 10, 2)", "incremental"],
    ["SELECT count(*) FROM demo WHERE size > 1 GROUP BY COUNTWINDOW(5, 2)", "incremental"],
    ["SELECT *, count(*) AS c FROM demo GROUP BY TUMBLINGWINDOW(ss, 1) HAVING c > 1 ORDER BY c", "incremental"],
    ["SELECT color FROM demo GROUP BY color, TUMBLINGWINDOW(ss, 1)", "incremental"],
    ["SELECT color, count(*), window_end() FROM demo GROUP BY color, TUMBLINGWINDOW(ss, 1)", "incremental"],
    // Rows needed: per-row projection, joins, sliding and state windows.
    ["SELECT color FROM demo GROUP BY TUMBLINGWINDOW(ss, 1)", "buffered"],
    ["SELECT count(*) FROM demo INNER JOIN demo1 ON demo.ts = demo1.ts GROUP BY TUMBLINGWINDOW(ss, 1)", "buffered"],
    ["SELECT count(*) FROM demo GROUP BY SLIDINGWINDOW(ss, 1)", "buffered"],
    ["SELECT count(*) FROM demo GROUP BY STATEWINDOW(size > 1, size > 5)", "buffered"],
    // Aggregates without an accumulator, or computed over the whole window.
    ["SELECT stddev(size) FROM demo GROUP BY TUMBLINGWINDOW(ss, 1)", "buffered"],
    ["SELECT count(*), median(size) FROM demo GROUP BY TUMBLINGWINDOW(ss, 1)", "buffered"],
    ["SELECT count(*) FROM demo WHERE size > avg(size) GROUP BY COUNTWINDOW(4)", "buffered"],
    ["SELECT last_agg_hit_count() AS n FROM demo GROUP BY TUMBLINGWINDOW(ss, 1)", "buffered"],
    // The window's range is needed row by row.
    ["SELECT sum(window_end() - ts) FROM demo GROUP BY TUMBLINGWINDOW(ss, 1)", "buffered"],
    ["SELECT count(*) FROM demo WHERE ts < window_end() GROUP BY COUNTWINDOW(3)", "buffered"],
  ])("%s → %s", (sql, want) => {
    expect(evaluator(sql)).toBe(want);
  });

  test("event time keeps the choice; windowEvaluator=buffered forces the buffered one", () => {
    const sql = "SELECT color, count(*) FROM demo WHERE size > 2 GROUP BY color, TUMBLINGWINDOW(ss, 1)";
    expect(evaluator(sql, { isEventTime: true })).toBe("incremental");
    expect(evaluator(sql, { windowEvaluator: "buffered" })).toBe("buffered");
  });

  test("the incremental plan keeps eKuiper's node names", () => {
    const p = plan("SELECT color, count(*) AS c FROM demo WHERE size > 2 GROUP BY color, COUNTWINDOW(3) HAVING c > 1");
    expect(p.ops.map((o) => o.name)).toEqual(["2_window", "3_filter", "4_aggregate", "5_having", "6_project"]);
    expect(windowEvaluatorOf(p)).toEqual({ op: "2_window", evaluator: "incremental" });
  });
});

describe("eKuiper's inc_agg_window (planOptimizeStrategy.enableIncrementalWindow)", () => {
  const on = { incrementalWindow: true };
  test.each([
    ["SELECT count(*) FROM demo GROUP BY TUMBLINGWINDOW(ss, 1)", ["2_inc_agg_window", "3_project"]],
    // WHERE filters the aggregated rows; GROUP BY is done by the fused operator.
    ["SELECT color, count(*) FROM demo WHERE size > 2 GROUP BY color, TUMBLINGWINDOW(ss, 1)", ["2_inc_agg_window", "3_filter", "4_project"]],
    ["SELECT count(*) FROM demo GROUP BY COUNTWINDOW(2) FILTER (WHERE size > 1)", ["2_windowFilter", "2_inc_agg_window", "3_project"]],
    // Not eligible: the normal path.
    ["SELECT count(*) FROM demo GROUP BY COUNTWINDOW(4, 2)", ["2_window", "3_project"]],
    ["SELECT count(*) FROM demo GROUP BY SESSIONWINDOW(ss, 10, 2)", ["2_window", "3_project"]],
    ["SELECT stddev(size) FROM demo GROUP BY TUMBLINGWINDOW(ss, 1)", ["2_window", "3_project"]],
  ])("%s", (sql, want) => {
    expect(plan(sql, on).ops.map((o) => o.name)).toEqual(want);
  });
});
