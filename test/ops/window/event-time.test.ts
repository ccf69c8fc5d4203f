/**
 * Event time (windows §6): the watermark operator's place and name, WHERE placement, late rows
 * dropped and counted as lost, lateTolerance parsing, several streams, and the plan errors.
 * The §10.7 timelines themselves are in timelines.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { replayLines } from "../../helpers/replay-lines.ts";
import { createFunctionRegistry } from "../../../lib/functions/index.ts";
import { UTC } from "../../../lib/value/time.ts";
import { planSelect } from "../../../lib/plan/plan.ts";
import { streamDef } from "../../../lib/plan/streams.ts";
import { parseRuleFile } from "../../../lib/sql/parse.ts";

const functions = createFunctionRegistry();

const STREAMS = `
CREATE STREAM demoE (color STRING, size BIGINT, ts BIGINT) WITH (FORMAT="JSON", TIMESTAMP="ts");
CREATE STREAM demoF (color STRING, size BIGINT, ts BIGINT) WITH (FORMAT="JSON", TIMESTAMP="ts");
CREATE STREAM plain (color STRING, size BIGINT, ts BIGINT) WITH (FORMAT="JSON");
`;

function nodes(select: string, options: Record<string, unknown> = { isEventTime: true }): string[] {
  const file = parseRuleFile(STREAMS + select, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const { plan } = planSelect(file.select, defs, { functions, env: { now: () => 0, zone: UTC, ruleId: "r", ruleStart: 0 }, zone: UTC, ...options });
  const out: string[] = [];
  for (const s of plan.sources) out.push(`source_${s.name}`, ...s.helpers.map((h) => h.name));
  out.push(...plan.ops.map((o) => o.name));
  return out;
}

async function run(sql: string, input: unknown[], options: Record<string, unknown>) {
  const { out, err, res } = await replayLines(STREAMS + sql, input.map((x) => JSON.stringify(x)), options);
  const emissions = out
    .split("\n")
    .filter((l) => l)
    .map((l) => JSON.parse(l) as unknown[]);
  return { ...res, emissions, err };
}

const row = (arrival: number, ts: number, size = 1, stream = "demoE") => ({ ts: arrival, stream, data: { color: "c", size, ts } });

describe("plan", () => {
  test.each([
    ["SELECT * FROM demoE WHERE size > 2 GROUP BY tumblingwindow(ss, 1)", ["source_demoE", "2_preprocessor", "3_watermark", "4_window", "5_filter", "6_project"]],
    ['SELECT size FROM demoE GROUP BY SlidingWindow(ss, 1, 4) FILTER (WHERE color = "red")', ["source_demoE", "2_preprocessor", "3_watermark", "4_windowFilter", "4_window", "5_project"]],
    // The watermark stops the push-down: WHERE sits right above it (sql §13.2).
    ["SELECT * FROM demoE WHERE size > 2", ["source_demoE", "2_preprocessor", "3_watermark", "4_filter", "5_project"]],
    ["SELECT * FROM demoE INNER JOIN demoF ON demoE.size = demoF.size GROUP BY TUMBLINGWINDOW(ss, 1)", ["source_demoE", "2_preprocessor", "source_demoF", "4_preprocessor", "5_watermark", "6_window", "7_join", "8_project"]],
  ])("%s", (sql, want) => {
    expect(nodes(sql)).toEqual(want);
  });

  test.each([
    ["SELECT count(*) FROM plain GROUP BY TUMBLINGWINDOW(ss, 1)", "preprocessor is set to be event time but stream option TIMESTAMP not found"],
    ["SELECT count(*) FROM demoE GROUP BY COUNTWINDOW(3)", "unsupported window type 5"],
  ])("plan error: %s", (sql, message) => {
    expect(() => nodes(sql)).toThrow(message);
  });

  test("lateTolerance: ms number or Go duration; negative and fractional values are rejected", async () => {
    const sql = "SELECT size FROM demoE";
    const input = [row(1000, 1000), row(2000, 1500), row(3000, 4000)];
    // Released once the watermark (max ts − tolerance) reaches them.
    expect((await run(sql, input, { isEventTime: true, lateTolerance: 0 })).emissions.length).toBe(3);
    expect((await run(sql, input, { isEventTime: true, lateTolerance: "2s" })).emissions.length).toBe(2);
    expect((await run(sql, input, { isEventTime: true, lateTolerance: 2500 })).emissions.length).toBe(2);
    expect((await run(sql, input, { isEventTime: true })).emissions.length).toBe(2);
    const neg = await run(sql, input, { isEventTime: true, lateTolerance: -1 });
    expect(neg.exitCode).toBe(1);
    expect(neg.err).toContain("Rule rule has invalid options: invalidLateTol:lateTol must be greater than 0.");
    const frac = await run(sql, input, { isEventTime: true, lateTolerance: 1.5 });
    expect(frac.err).toContain("duration 1.5 is not an integer");
  });
});

describe("watermark", () => {
  test("without a window it reorders by timestamp and holds the last rows back; late rows are lost", async () => {
    const res = await run("SELECT size FROM demoE", [row(1000, 5000, 1), row(1001, 3000, 2), row(1002, 4500, 3), row(1003, 7000, 4), row(1004, 5500, 5), row(1005, 9000, 6)], {
      isEventTime: true,
      lateTolerance: 1000,
    });
    // wm 4000 after the first row: 3000 is late; wm 6000 releases 4500 and 5000; 5500 is late;
    // wm 8000 releases 7000; 9000 is still held at end of input.
    expect(res.emissions).toEqual([[{ size: 3 }], [{ size: 1 }], [{ size: 4 }]]);
    expect(res.lost).toBe(2);
    expect(res.status!["op_3_watermark_0_records_in_total"]).toBe(6);
    expect(res.status!["op_3_watermark_0_records_out_total"]).toBe(3);
    expect(res.status!["op_3_watermark_0_exceptions_total"]).toBe(0);
  });

  test("a row at exactly the last watermark is kept; one just below it is dropped", async () => {
    const res = await run("SELECT size FROM demoE", [row(1, 5000, 1), row(2, 4000, 2), row(3, 3999, 3), row(4, 9000, 4)], { isEventTime: true, lateTolerance: 1000 });
    expect(res.emissions).toEqual([[{ size: 2 }], [{ size: 1 }]]);
    expect(res.lost).toBe(1);
  });

  test("the watermark is the minimum over the rule's streams: nothing is released before every stream has sent", async () => {
    const sql = "SELECT demoE.size AS a, demoF.size AS b FROM demoE INNER JOIN demoF ON demoE.color = demoF.color GROUP BY TUMBLINGWINDOW(ss, 1)";
    const input = [row(1, 1_000_100, 1), row(2, 1_000_200, 2), row(3, 1_003_000, 3), row(4, 1_000_300, 7, "demoF"), row(5, 1_004_000, 8, "demoF")];
    const res = await run(sql, input, { isEventTime: true, lateTolerance: 500 });
    // demoF's first row (1000300) is not late: until it came, the watermark did not exist.
    expect(res.emissions).toEqual([[{ a: 1, b: 7 }, { a: 2, b: 7 }]]);
    expect(res.lost).toBe(0);
  });
});
