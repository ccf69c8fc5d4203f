/** plan/two-stage.ts: which partitioned rules split into partial aggregates and their merge, and what each stage computes. */
import { expect, test } from "bun:test";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { isAggregateCall } from "../../lib/plan/analyze.ts";
import { planTwoStage } from "../../lib/plan/two-stage.ts";
import { renderExpr } from "../../lib/sql/render.ts";
import { parseSelect } from "../../lib/sql/parse.ts";

const functions = createFunctionRegistry();
const split = (sql: string, key = "gw", eventTime = true) => planTwoStage(parseSelect(sql, functions), key, eventTime, isAggregateCall(functions));
const fields = (s: { fields: { expr: Parameters<typeof renderExpr>[0]; name: string }[] }) => s.fields.map((f) => `${renderExpr(f.expr)} AS ${f.name}`);

test("decomposable aggregates split into partials per key and their merge", () => {
  const r = split(
    "SELECT deviceId, count(*) AS n, count(v) AS c, sum(v) AS s, avg(v) AS a, min(v) AS lo, max(v) AS hi, round(avg(v) * 2, 1) AS r, window_end() AS we FROM s WHERE v > 0 GROUP BY deviceId, TUMBLINGWINDOW(ss, 10) HAVING sum(v) > 3 ORDER BY hi DESC LIMIT 5",
  );
  if (!r || !("plan" in r)) throw new Error(`not split: ${JSON.stringify(r)}`);
  const { stage1, stage2, length } = r.plan;
  expect(length).toBe(10_000);
  // avg reuses the partial sum of sum(v) and the partial count of count(v).
  expect(fields(stage1)).toEqual([
    "$$default.deviceId AS deviceId",
    "Call:{ name:count, args:[*] } AS __a0",
    "Call:{ name:count, args:[$$default.v] } AS __a1",
    "Call:{ name:sum, args:[$$default.v] } AS __a2",
    "Call:{ name:min, args:[$$default.v] } AS __a3",
    "Call:{ name:max, args:[$$default.v] } AS __a4",
    "Call:{ name:window_start } AS __ws",
    "Call:{ name:window_end } AS __we",
  ]);
  expect(stage1.where && renderExpr(stage1.where)).toBe("binaryExpr:{ $$default.v > 0 }");
  expect(stage1.having).toBeUndefined();
  expect(stage1.orderBy).toEqual([]);
  expect(stage1.limit).toBeUndefined();
  expect(fields(stage2)).toEqual([
    "$$default.deviceId AS deviceId",
    "Call:{ name:sum, args:[$$default.__a0] } AS n",
    "Call:{ name:sum, args:[$$default.__a1] } AS c",
    "Call:{ name:sum, args:[$$default.__a2] } AS s",
    "parenExpr:{ binaryExpr:{ Call:{ name:sum, args:[$$default.__a2] } / Call:{ name:sum, args:[$$default.__a1] } } } AS a",
    "Call:{ name:min, args:[$$default.__a3] } AS lo",
    "Call:{ name:max, args:[$$default.__a4] } AS hi",
    "Call:{ name:round, args:[binaryExpr:{ parenExpr:{ binaryExpr:{ Call:{ name:sum, args:[$$default.__a2] } / Call:{ name:sum, args:[$$default.__a1] } } } * 2 }, 1] } AS r",
    "Call:{ name:window_end } AS we",
  ]);
  expect(stage2.where && renderExpr(stage2.where)).toBe("binaryExpr:{ $$default.__t = 0 }");
  expect(stage2.having && renderExpr(stage2.having)).toBe("binaryExpr:{ Call:{ name:sum, args:[$$default.__a2] } > 3 }");
  expect(stage2.orderBy.map((o) => [renderExpr(o.expr), o.ascending])).toEqual([["$$default.hi", false]]);
  expect(stage2.limit).toBe(5);
  expect(stage2.groupBy.map(renderExpr)).toEqual(["$$default.deviceId", "Call:{ name:tumblingwindow, args:[SS, 10] }"]);
});

test("a GROUP BY holding the partition key, or no GROUP BY key, needs no split", () => {
  expect(split("SELECT gw, count(*) FROM s GROUP BY gw, TUMBLINGWINDOW(ss, 10)")).toBeUndefined();
  expect(split("SELECT count(*) FROM s GROUP BY TUMBLINGWINDOW(ss, 10)")).toBeUndefined();
  expect(split("SELECT deviceId, count(*) FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)", "")).toBeUndefined();
});

test.each([
  ["SELECT deviceId, collect(v) AS c FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)", "collect() is not decomposable into partial aggregates"],
  ["SELECT deviceId, count(*) FROM s GROUP BY deviceId, HOPPINGWINDOW(ss, 10, 5)", "HOPPINGWINDOW is not split (only TUMBLINGWINDOW is)"],
  ["SELECT deviceId, count(*) FROM s GROUP BY deviceId, SLIDINGWINDOW(ss, 10)", "SLIDINGWINDOW is not split (only TUMBLINGWINDOW is)"],
  ["SELECT deviceId, count(*) FROM s GROUP BY deviceId, COUNTWINDOW(10)", "COUNTWINDOW is not split (only TUMBLINGWINDOW is)"],
  ["SELECT deviceId, count(*) FROM s GROUP BY deviceId", "it has no window"],
  ["SELECT deviceId, v, count(*) FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)", "it reads v outside an aggregate and the GROUP BY keys"],
  ["SELECT *, count(*) FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)", "it selects *"],
  ["SELECT deviceId, count(*) FROM s GROUP BY deviceId, lower(site), TUMBLINGWINDOW(ss, 10)", "its GROUP BY key Call:{ name:lower, args:[$$default.site] } is not a column"],
  ["SELECT deviceId, stddev(v) AS d FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)", "stddev() is not decomposable into partial aggregates"],
  ["SELECT deviceId, lag(deviceId) AS l, count(*) FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)", "lag() is an analytic function"],
  ["SELECT s.deviceId, count(*) FROM s INNER JOIN t ON s.deviceId = t.id GROUP BY s.deviceId, TUMBLINGWINDOW(ss, 10)", "it joins"],
  ["SELECT deviceId, count(*) FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10) FILTER (WHERE v > 1)", "its window has a FILTER clause"],
])("not split: %s", (sql, reason) => {
  expect(split(sql)).toEqual({ reason });
});

test("processing time is not split: a partition's empty window cannot be told from a late one", () => {
  expect(split("SELECT deviceId, count(*) FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)", "gw", false)).toEqual({
    reason: "it runs in processing time (each partition closes its windows on its own member's clock, so a merge cannot tell an empty partition from a late one)",
  });
});

test("the stages share no node with the rule's SELECT (each is bound by its own analysis)", () => {
  const s = parseSelect("SELECT deviceId, max(v) AS hi FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10) ORDER BY hi", functions);
  (s.orderBy[0]!.expr as { aliasOf?: unknown }).aliasOf = s.fields[1]!.expr;
  const r = planTwoStage(s, "gw", true, isAggregateCall(functions));
  if (!r || !("plan" in r)) throw new Error("not split");
  expect((r.plan.stage2.orderBy[0]!.expr as { aliasOf?: unknown }).aliasOf).toBeUndefined();
  expect(r.plan.stage2.groupBy[1]).not.toBe(s.groupBy[1]);
  expect(r.plan.stage1.groupBy[1]).not.toBe(r.plan.stage2.groupBy[1]);
});
