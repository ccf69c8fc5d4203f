/**
 * eKuiper's opt-in incremental window (`planOptimizeStrategy.enableIncrementalWindow`, windows §9):
 * the fused `inc_agg_window` and its observable differences from the normal path.
 */
import { expect, test } from "bun:test";
import { runCase } from "../../../lib/cli/golden.ts";

const P = 1541152000000;
const DEMO = 'CREATE STREAM demo (color STRING, size BIGINT, ts BIGINT) WITH (FORMAT="JSON");\n';
const ROWS: [number, string, number][] = [
  [486013, "red", 3],
  [486822, "blue", 6],
  [487632, "blue", 2],
  [488442, "yellow", 4],
  [489252, "red", 1],
];
const input = [{ ts: P + 486000 }, ...ROWS.map(([t, color, size]) => ({ ts: P + t, stream: "demo", data: { color, size, ts: P + t } })), { ts: P + 490000 }];
const options = { planOptimizeStrategy: { enableIncrementalWindow: true } };

test.each([
  [
    "non-aggregated columns from the last row; sum and avg in float",
    "SELECT color, count(*) AS c, sum(size) AS s, avg(size) AS a FROM demo GROUP BY TUMBLINGWINDOW(ss, 2)",
    [[{ color: "blue", c: 3, s: 11, a: 11 / 3 }], [{ color: "red", c: 2, s: 5, a: 2.5 }]],
  ],
  [
    "WHERE filters the aggregated rows, whose aggregates include the rows failing it",
    "SELECT color, count(*) AS c FROM demo WHERE size > 2 GROUP BY color, TUMBLINGWINDOW(ss, 2)",
    [[{ color: "red", c: 1 }], [{ color: "yellow", c: 1 }]],
  ],
  [
    "count windows: window_start is the first row's time",
    "SELECT count(*) AS c, window_start() AS ws, window_end() AS we FROM demo GROUP BY COUNTWINDOW(2)",
    [[{ c: 2, ws: P + 486013, we: P + 486822 }], [{ c: 2, ws: P + 487632, we: P + 488442 }]],
  ],
])("%s", async (_name, select, want) => {
  expect(await runCase({ name: "", sql: DEMO + select, options, input, onEof: "drop", want })).toBeUndefined();
});

test("collect skips nulls (inc_collect has policy N); the normal path keeps them", async () => {
  const withNull = input.map((e) => ("data" in e && e.data.color === "yellow" ? { ...e, data: { ...e.data, size: null } } : e));
  const sql = DEMO + "SELECT collect(size) AS s FROM demo GROUP BY COUNTWINDOW(5)";
  expect(await runCase({ name: "", sql, options, input: withNull, onEof: "drop", want: [[{ s: [3, 6, 2, 1] }]] })).toBeUndefined();
  expect(await runCase({ name: "", sql, input: withNull, onEof: "drop", want: [[{ s: [3, 6, 2, null, 1] }]] })).toBeUndefined();
});
