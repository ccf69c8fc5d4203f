/** Lookup-table joins at plan time (sql.md §12.5, §6.6, §13): node names, key extraction, errors. */
import { describe, expect, test } from "bun:test";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { UTC } from "../../lib/value/time.ts";
import { planSelect } from "../../lib/plan/plan.ts";
import { streamDef } from "../../lib/plan/streams.ts";
import { parseRuleFile } from "../../lib/sql/parse.ts";

const functions = createFunctionRegistry();

const STREAMS = `
CREATE STREAM demo () WITH (DATASOURCE="demo", TYPE="memory");
CREATE TABLE t () WITH (DATASOURCE="t/in", TYPE="memory", KIND="lookup", KEY="id");
CREATE TABLE u () WITH (DATASOURCE="u/in", TYPE="memory", KIND="lookup", KEY="uid");
CREATE TABLE scan1 (id BIGINT, size BIGINT) WITH (DATASOURCE="lookup.json", FORMAT="json");
`;

function plan(select: string) {
  const file = parseRuleFile(STREAMS + select, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  return planSelect(file.select, defs, { functions, env: { now: () => 0, zone: UTC, ruleId: "r", ruleStart: 0 }, zone: UTC }).plan;
}

function nodes(select: string): string[] {
  const p = plan(select);
  const out: string[] = [];
  for (const s of p.sources) out.push(`source_${s.name}`, ...s.helpers.map((h) => h.name));
  out.push(...p.ops.map((o) => o.name));
  return out;
}

describe("a lookup join plans a node named after the table, and no data source for it", () => {
  test.each([
    ["SELECT demo.id, t.name FROM demo INNER JOIN t ON demo.id = t.id", ["source_demo", "t", "3_project"]],
    // Conjuncts not reading the table are pushed down to the stream; the others stay above the lookup.
    ["SELECT * FROM demo INNER JOIN t ON demo.id = t.id AND t.v > 1 WHERE demo.a > 2", ["source_demo", "2_filter", "t", "4_filter", "5_project"]],
    ["SELECT * FROM demo LEFT JOIN t ON t.id = demo.id LEFT JOIN u ON u.uid = t.uid", ["source_demo", "t", "u", "4_project"]],
    // Each lookup keeps the WHERE conjuncts reading its table as a filter right above itself.
    ["SELECT * FROM demo INNER JOIN t ON demo.id = t.id INNER JOIN u ON u.uid = demo.uid WHERE t.x = 1 AND u.y = 2", ["source_demo", "t", "3_filter", "u", "5_filter", "6_project"]],
    ["SELECT count(*) FROM demo INNER JOIN t ON demo.id = t.id GROUP BY COUNTWINDOW(2)", ["source_demo", "2_window", "t", "4_project"]],
    ["SELECT * FROM demo INNER JOIN scan1 ON demo.id = scan1.id INNER JOIN t ON t.id = demo.id", ["source_demo", "source_scan1", "3_join_aligner", "4_join", "t", "6_project"]],
  ])("%s", (sql, want) => {
    expect(nodes(sql as string)).toEqual(want as string[]);
  });

  test("keys are the `tableField = expr` conjuncts, in ON order, either side; RIGHT/FULL run as INNER", () => {
    const p = plan("SELECT * FROM demo RIGHT JOIN t ON demo.a + 1 = t.k AND t.id = demo.id AND t.v > demo.v");
    const op = p.ops.find((o) => o.kind === "lookup")!;
    if (op.kind !== "lookup") throw new Error("no lookup");
    expect(op.spec.fields).toEqual(["k", "id"]);
    expect(op.spec.type).toBe("INNER");
    expect(op.spec.table.name).toBe("t");
    expect(p.ops.map((o) => o.kind)).toEqual(["lookup", "filter", "project"]);
  });
});

describe("lookup plan errors carry eKuiper's texts", () => {
  test.each([
    ["SELECT * FROM demo INNER JOIN t ON demo.id > t.id", "join condition binaryExpr:{ demo.id > t.id } is invalid, at least one equi-join predicate is required"],
    ["SELECT * FROM demo INNER JOIN t ON t.id = t.v", "join condition binaryExpr:{ t.id = t.v } is invalid, at least one equi-join predicate is required"],
    ["SELECT * FROM demo INNER JOIN t ON t.id = demo.a AND t.id = demo.b", "join condition binaryExpr:{ binaryExpr:{ t.id = demo.a } AND binaryExpr:{ t.id = demo.b } } is invalid, at least one equi-join predicate is required"],
    ["SELECT * FROM demo INNER JOIN t ON demo.id = t.id OR demo.x = t.x", "join condition binaryExpr:{ binaryExpr:{ demo.id = t.id } OR binaryExpr:{ demo.x = t.x } } is invalid, at least one equi-join predicate is required"],
    ["SELECT * FROM t", "cannot find lookup table map[t:{DATASOURCE:t/in TYPE:memory KIND:lookup KEY:id}] in any join"],
  ])("%s", (sql, err) => {
    expect(() => plan(sql as string)).toThrow(err as string);
  });

  test("the missing-join error names the table", () => {
    expect(() => plan("SELECT * FROM t")).toThrow(/^cannot find lookup table map\[t:/);
  });
});
