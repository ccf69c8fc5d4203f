/** The planner: eKuiper's operator order and node names (sql.md §13.3), and plan-time errors (§6). */
import { describe, expect, test } from "bun:test";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { UTC } from "../../lib/value/time.ts";
import { planSelect } from "../../lib/plan/plan.ts";
import { streamDef } from "../../lib/plan/streams.ts";
import { parseRuleFile } from "../../lib/sql/parse.ts";

const functions = createFunctionRegistry();

const STREAMS = `
CREATE STREAM demo (color STRING, size BIGINT, ts BIGINT) WITH (DATASOURCE="demo", FORMAT="JSON", TYPE="memory");
CREATE STREAM demo1 (temp FLOAT, hum BIGINT, ts BIGINT) WITH (DATASOURCE="demo1", FORMAT="JSON", TYPE="memory");
CREATE TABLE table1 (name STRING, size BIGINT, id BIGINT) WITH (DATASOURCE="lookup.json", FORMAT="json", STRICT_VALIDATION="true");
`;

function nodes(select: string, options: { isEventTime?: boolean } = {}): string[] {
  const file = parseRuleFile(STREAMS + select, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const { plan } = planSelect(file.select, defs, { functions, env: { now: () => 0, zone: UTC, ruleId: "r", ruleStart: 0 }, zone: UTC, ...options });
  const out: string[] = [];
  for (const s of plan.sources) out.push(`source_${s.name}`, ...s.helpers.map((h) => h.name));
  out.push(...plan.ops.map((o) => o.name));
  return out;
}

describe("node names follow eKuiper's index arithmetic", () => {
  test.each([
    ["SELECT * FROM demo", ["source_demo", "2_project"]],
    ["SELECT * FROM demo WHERE size > 3", ["source_demo", "2_filter", "3_project"]],
    ["SELECT count(*) AS c FROM demo WHERE size > 2 GROUP BY tumblingwindow(ss, 1) HAVING c > 1", ["source_demo", "2_filter", "3_window", "4_having", "5_project"]],
    ["SELECT * FROM demo GROUP BY HOPPINGWINDOW(ss, 2, 1)", ["source_demo", "2_window", "3_project"]],
    ['SELECT color, count(*) FROM demo GROUP BY SlidingWindow(ss, 2) OVER (WHEN size > 1), color ORDER BY color', ["source_demo", "2_window", "3_aggregate", "4_order", "5_project"]],
    ["SELECT * FROM demo INNER JOIN demo1 ON demo.ts = demo1.ts GROUP BY SlidingWindow(ss, 1) HAVING count(*) > 1", ["source_demo", "source_demo1", "3_window", "4_join", "5_having", "6_project"]],
    ["SELECT * FROM demo WHERE size > 2 GROUP BY COUNTWINDOW(5)", ["source_demo", "2_window", "3_filter", "4_project"]],
    ["SELECT lag(size) AS l FROM demo WHERE size > 2", ["source_demo", "2_analytic", "3_filter", "4_project"]],
    ["SELECT unnest(color) FROM demo", ["source_demo", "2_project", "3_projectset"]],
    ["SELECT *, row_number() FROM demo GROUP BY COUNTWINDOW(2)", ["source_demo", "2_window", "3_windowFunc", "4_project"]],
    ["SELECT * FROM demo WHERE size > avg(size) GROUP BY COUNTWINDOW(2)", ["source_demo", "2_window", "3_agg_func", "4_filter", "5_project"]],
    ["SELECT * FROM demo GROUP BY COUNTWINDOW(2) FILTER (WHERE size > 1)", ["source_demo", "2_windowFilter", "2_window", "3_project"]],
    ["SELECT name FROM demo INNER JOIN table1 ON demo.size = table1.size", ["source_demo", "source_table1", "3_preprocessor", "4_join_aligner", "5_join", "6_project"]],
  ])("%s", (sql, want) => {
    expect(nodes(sql as string)).toEqual(want as string[]);
  });
});

describe("eKuiper's push-down and children-first numbering", () => {
  test.each([
    // A processing-time window's FILTER goes down to its input as a filter (windows §10.2).
    ["SELECT color FROM demo GROUP BY HOPPINGWINDOW(ss, 2, 1) FILTER (WHERE size > 2)", ["source_demo", "2_filter", "3_window", "4_project"]],
    ["SELECT color FROM demo WHERE ts > 0 GROUP BY TUMBLINGWINDOW(ss, 1) FILTER (WHERE size > 2)", ["source_demo", "2_filter", "3_window", "4_project"]],
    // An analytic node stops it: what cannot pass becomes the window's pre-filter.
    ["SELECT lag(size) AS l FROM demo WHERE size > 2 GROUP BY TUMBLINGWINDOW(ss, 1)", ["source_demo", "2_analytic", "3_windowFilter", "3_window", "4_project"]],
    // Each stream takes the conjuncts reading only its columns; the join keeps the others.
    [
      "SELECT * FROM demo INNER JOIN demo1 ON demo.ts = demo1.ts WHERE demo.size > 1 AND demo1.hum > 2 GROUP BY TUMBLINGWINDOW(ss, 1)",
      ["source_demo", "2_filter", "source_demo1", "4_filter", "5_window", "6_join", "7_project"],
    ],
    [
      "SELECT * FROM demo LEFT JOIN demo1 ON demo.ts = demo1.ts WHERE demo.size > demo1.hum GROUP BY TUMBLINGWINDOW(ss, 1)",
      ["source_demo", "source_demo1", "3_window", "4_join", "5_filter", "6_project"],
    ],
    // A scan table is the join aligner's child beside the window: numbered after it (sources are
    // listed first here). Nothing passes the aligner into the window, so the window keeps its
    // FILTER and a table condition stays in the join.
    [
      "SELECT name FROM demo INNER JOIN table1 ON demo.size = table1.size WHERE table1.size > 1 GROUP BY TUMBLINGWINDOW(ss, 1) FILTER (WHERE color = \"red\")",
      ["source_demo", "source_table1", "4_preprocessor", "2_windowFilter", "2_window", "5_join_aligner", "6_join", "7_project"],
    ],
    // Without a window the aligner pushes into its stream children; the table takes nothing.
    [
      "SELECT name FROM demo INNER JOIN table1 ON demo.size = table1.size WHERE demo.color = \"red\" AND table1.id > 1",
      ["source_demo", "2_filter", "source_table1", "4_preprocessor", "5_join_aligner", "6_join", "7_project"],
    ],
  ])("%s", (sql, want) => {
    expect(nodes(sql as string)).toEqual(want as string[]);
  });
});

describe("STRICT_VALIDATION checks the columns the rule reads", () => {
  const strict = (select: string): string[] | null => {
    const file = parseRuleFile(STREAMS + select, functions);
    const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
    const { plan } = planSelect(file.select, defs, { functions, env: { now: () => 0, zone: UTC, ruleId: "r", ruleStart: 0 }, zone: UTC });
    const pre = plan.sources.find((x) => x.name === "table1")!.helpers.find((h) => h.kind === "preprocessor");
    return pre?.kind === "preprocessor" ? (pre.spec.strict?.map((f) => f.name) ?? null) : null;
  };
  test("only the used declared columns are validated; a wildcard validates all", () => {
    expect(strict("SELECT demo.color FROM demo INNER JOIN table1 ON demo.size = table1.SIZE")).toEqual(["size"]);
    expect(strict("SELECT * FROM demo INNER JOIN table1 ON demo.size = table1.size")).toEqual(["name", "size", "id"]);
  });
});

describe("plan-time errors", () => {
  test.each([
    ["SELECT * FROM nope", "fail to get stream nope, please check if stream is created"],
    ["SELECT nope FROM demo", "unknown field nope"],
    ["SELECT ts FROM demo INNER JOIN demo1 ON demo.ts = demo1.ts GROUP BY COUNTWINDOW(2)", "ambiguous field ts"],
    ["SELECT a + 1 AS b, b + 1 AS a FROM demo", "select fields have cycled alias"],
    ["SELECT color FROM demo GROUP BY color", "select stmt group by should be used with window"],
    ["SELECT * FROM demo INNER JOIN demo1 ON demo.ts = demo1.ts", "a time window or count window is required to join multiple streams"],
    ["SELECT * FROM table1 GROUP BY COUNTWINDOW(2)", "cannot run window for TABLE sources"],
    ["SELECT color, color FROM demo", "duplicate field definition color"],
    ["SELECT sum(avg(size)) FROM demo GROUP BY COUNTWINDOW(2)", "invalid argument for func sum: aggregate argument is not allowed"],
    ["SELECT color FROM demo GROUP BY COUNTWINDOW(2) HAVING size > 1", "Not allowed to call non-aggregate functions in HAVING clause: binaryExpr:{ demo.size > 1 }."],
    ["SELECT last_hit_count() FROM demo GROUP BY COUNTWINDOW(2)", "function last_hit_count is not allowed in an aggregate query"],
    ["SELECT color[3:1] FROM demo", "colon start value can't be greater than end value"],
  ])("%s", (sql, err) => {
    expect(() => nodes(sql as string)).toThrow(err as string);
  });

  test("event time needs TIMESTAMP", () => {
    expect(() => nodes("SELECT * FROM demo", { isEventTime: true })).toThrow("preprocessor is set to be event time but stream option TIMESTAMP not found");
  });
});

describe("column pruning: columns (explain, decoding) and valueColumns (int64 conversion in pipe mode)", () => {
  const sources = (sql: string) => {
    const file = parseRuleFile(`CREATE STREAM s () WITH (DATASOURCE="s", FORMAT="JSON", TYPE="memory");\n${sql}`, functions);
    const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
    const s = planSelect(file.select, defs, { functions, env: { now: () => 0, zone: UTC, ruleId: "r", ruleStart: 0 }, zone: UTC }).plan.sources[0]!;
    const list = (x: ReadonlySet<string> | null | undefined) => (x ? [...x].sort() : x);
    return { columns: list(s.columns), values: list(s.valueColumns) };
  };
  test("count(*) reads no value: the grouped columns are the observed ones", () => {
    expect(sources("SELECT device, count(*) AS n, max(temp) AS m FROM s GROUP BY device, TUMBLINGWINDOW(ss, 10)")).toEqual({ columns: null, values: ["device", "temp"] });
    expect(sources("SELECT COUNT(*) AS n FROM s GROUP BY TUMBLINGWINDOW(ss, 10)")).toEqual({ columns: null, values: [] });
  });
  test("a wildcard anywhere else, or deduplicate, needs every column", () => {
    expect(sources("SELECT *, count(*) AS n FROM s GROUP BY TUMBLINGWINDOW(ss, 10)")).toEqual({ columns: null, values: null });
    expect(sources("SELECT collect(*) AS all_rows FROM s GROUP BY TUMBLINGWINDOW(ss, 10)")).toEqual({ columns: null, values: null });
    expect(sources("SELECT a FROM s")).toEqual({ columns: ["a"], values: ["a"] });
  });
});
