/**
 * Property test: the incremental evaluator emits exactly what the buffered one does (windows §9).
 * Random rows — mixed types, nulls, many keys, out-of-order and late rows in event time —
 * go through both evaluators of the same rule for every window kind the incremental evaluator
 * covers and every incremental aggregate; the outputs must match emission by emission, errors
 * included (sendError turns them into rows).
 */
import { describe, expect, test } from "bun:test";
import { replayLines } from "../../helpers/replay-lines.ts";
import { createFunctionRegistry } from "../../../lib/functions/index.ts";
import { UTC } from "../../../lib/value/time.ts";
import { planSelect } from "../../../lib/plan/plan.ts";
import { windowEvaluatorOf } from "../../../lib/plan/plan-window.ts";
import { streamDef } from "../../../lib/plan/streams.ts";
import { parseRuleFile } from "../../../lib/sql/parse.ts";
import { prng as rng } from "../../helpers/prng.ts";

const functions = createFunctionRegistry();


type Profile = "int" | "float" | "mixed" | "string";

interface Kind {
  readonly name: string;
  readonly window: string;
  readonly eventTime: boolean;
  /** ms added to the rule start (22:13:20.000): 300 puts a first aligned end in the past (§3.2). */
  readonly startOffset?: number;
}

const KINDS: Kind[] = [
  { name: "tumbling", window: "TUMBLINGWINDOW(ss, 2)", eventTime: false },
  { name: "tumbling ms", window: "TUMBLINGWINDOW(ms, 700)", eventTime: false },
  { name: "hopping L=2H", window: "HOPPINGWINDOW(ss, 2, 1)", eventTime: false },
  { name: "hopping L=3H", window: "HOPPINGWINDOW(ms, 1500, 500)", eventTime: false },
  { name: "hopping H>L", window: "HOPPINGWINDOW(ms, 500, 1200)", eventTime: false },
  { name: "hopping, first end in the past", window: "HOPPINGWINDOW(ss, 40, 20)", eventTime: false, startOffset: 300 },
  { name: "tumbling, first end in the past", window: "TUMBLINGWINDOW(ss, 20)", eventTime: false, startOffset: 300 },
  { name: "session", window: "SESSIONWINDOW(ss, 3, 1)", eventTime: false },
  { name: "session, first tick in the past", window: "SESSIONWINDOW(ss, 20, 2)", eventTime: false, startOffset: 300 },
  { name: "count", window: "COUNTWINDOW(5)", eventTime: false },
  { name: "count(5,2)", window: "COUNTWINDOW(5, 2)", eventTime: false },
  { name: "count(4,3)", window: "COUNTWINDOW(4, 3)", eventTime: false },
  { name: "event tumbling", window: "TUMBLINGWINDOW(ss, 1)", eventTime: true },
  { name: "event hopping", window: "HOPPINGWINDOW(ss, 2, 1)", eventTime: true },
  { name: "event hopping H>L", window: "HOPPINGWINDOW(ms, 400, 900)", eventTime: true },
  { name: "event session", window: "SESSIONWINDOW(ss, 2, 1)", eventTime: true },
  { name: "event session timeout=max", window: "SESSIONWINDOW(ms, 900, 900)", eventTime: true },
  { name: "event session timeout>max", window: "SESSIONWINDOW(ms, 600, 1500)", eventTime: true },
  { name: "session timeout>max", window: "SESSIONWINDOW(ms, 600, 1500)", eventTime: false },
];

/** Seeds per window kind and aggregate (EQUIVALENCE_SEEDS=50 for a longer soak). */
const SEEDS = Number(process.env.EQUIVALENCE_SEEDS ?? 6);

const AGGS = ["count(x)", "count(*)", "sum(x)", "avg(x)", "min(x)", "max(x)", "collect(x)", "merge_agg(o)", "last_value(x, true)", "last_value(x, false)"];

const SHAPES = [
  (agg: string, w: string) => `SELECT k, ${agg} AS r, window_start() AS ws, window_end() AS we FROM s GROUP BY k, ${w}`,
  (agg: string, w: string) => `SELECT ${agg} AS r, *, event_time() AS et FROM s GROUP BY ${w}`,
  (agg: string, w: string) => `SELECT k, ${agg} AS r, count(*) AS n FROM s WHERE y > 0 GROUP BY k, ${w} HAVING count(*) > 1 ORDER BY k DESC`,
  (agg: string, w: string) => `SELECT ${agg} AS r, y FROM s WHERE y > 0 GROUP BY ${w}`,
  (agg: string, w: string) => `SELECT k, j, ${agg} AS r FROM s GROUP BY k, j % 3, ${w} ORDER BY r LIMIT 3`,
];

function value(r: () => number, p: Profile): unknown {
  const u = r();
  if (u < 0.15) return null;
  switch (p) {
    case "int":
      return Math.floor(r() * 200) - 100;
    case "float":
      return Math.round((r() * 200 - 100) * 1000) / 1000 + 0.5;
    case "string":
      return ["a", "b", "zz", "é", "B", ""][Math.floor(r() * 6)];
    case "mixed": {
      const v = r();
      if (v < 0.4) return Math.floor(r() * 50);
      if (v < 0.7) return r() * 10 + 0.25;
      if (v < 0.85) return "s" + Math.floor(r() * 5);
      if (v < 0.95) return r() < 0.5;
      return { n: Math.floor(r() * 3) };
    }
  }
}

/** Replay envelopes: arrival times with random gaps; in event time `ts` jitters, so some rows are late. */
function input(seed: number, rows: number, keys: number, eventTime: boolean, startOffset = 0): string[] {
  const r = rng(seed);
  const profiles: Profile[] = ["int", "float", "mixed", "string"];
  const p = profiles[seed % profiles.length]!;
  const lines: string[] = [];
  let t = 1_700_000_000_000 + startOffset;
  lines.push(JSON.stringify({ ts: t }));
  for (let i = 0; i < rows; i++) {
    // Mostly short gaps, sometimes a long silence (empty windows, expired sessions).
    t += r() < 0.03 ? 2000 + Math.floor(r() * 6000) : Math.floor(r() * r() * 900);
    const key: unknown = r() < 0.05 ? null : r() < 0.05 ? String(Math.floor(r() * keys)) : Math.floor(r() * keys);
    const y: unknown = r() < 0.1 ? null : r() < 0.02 ? "text" : Math.floor(r() * 10) - 3;
    const o: unknown = r() < 0.2 ? null : r() < 0.1 ? 5 : { ["f" + Math.floor(r() * 4)]: Math.floor(r() * 9) };
    const data: Record<string, unknown> = { k: key, x: value(r, p), y, o, j: i };
    data.ts = eventTime ? t + Math.floor((r() - 0.75) * 2500) : t;
    lines.push(JSON.stringify({ ts: t, data }));
  }
  lines.push(JSON.stringify({ ts: t + 5000 }));
  return lines;
}

const STREAM = (eventTime: boolean) => `CREATE STREAM s (k BIGINT, x BIGINT, y BIGINT, o BIGINT, j BIGINT, ts BIGINT) WITH (FORMAT="JSON"${eventTime ? ', TIMESTAMP="ts"' : ""});\n`;

async function run(sql: string, lines: string[], options: Record<string, unknown>): Promise<{ out: string; lost: number }> {
  const { out, err, res } = await replayLines(sql, lines, options);
  if (res.exitCode !== 0) throw new Error(`rule failed: ${err}`);
  return { out, lost: res.lost };
}

function evaluatorOf(sql: string, eventTime: boolean): string {
  const file = parseRuleFile(sql, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const { plan } = planSelect(file.select, defs, { functions, env: { now: () => 0, zone: UTC, ruleId: "r", ruleStart: 0 }, zone: UTC, isEventTime: eventTime });
  return windowEvaluatorOf(plan)?.evaluator ?? "none";
}

function firstDifference(a: string, b: string): string {
  const x = a.split("\n");
  const y = b.split("\n");
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if (x[i] !== y[i]) return `emission ${i}:\n  incremental ${x[i] ?? "(none)"}\n  buffered    ${y[i] ?? "(none)"}`;
  return "";
}

describe("incremental and buffered evaluators agree", () => {
  for (const kind of KINDS) {
    test.each(AGGS)(`${kind.name}: %s`, async (agg) => {
      let emissions = 0;
      for (let s = 0; s < SEEDS; s++) {
        const seed = (kind.name.length * 7919 + agg.length * 104729 + s * 15485863) >>> 0;
        const shape = SHAPES[(seed >>> 3) % SHAPES.length]!;
        const sql = STREAM(kind.eventTime) + shape(agg, kind.window);
        expect(evaluatorOf(sql, kind.eventTime)).toBe("incremental");
        const lines = input(seed, kind.startOffset ? 600 : 200, 1 + (seed % 12), kind.eventTime, kind.startOffset);
        const options = { sendError: true, isEventTime: kind.eventTime, lateTolerance: 1000 };
        const inc = await run(sql, lines, options);
        const buf = await run(sql, lines, { ...options, windowEvaluator: "buffered" });
        if (inc.out !== buf.out) throw new Error(`seed ${seed}: ${sql}\n${firstDifference(inc.out, buf.out)}`);
        expect(inc.lost).toBe(buf.lost);
        emissions += inc.out.split("\n").length - 1;
      }
      expect(emissions).toBeGreaterThan(0);
    });
  }

  test("many keys, every aggregate in one rule", async () => {
    const aggs = AGGS.filter((a) => !a.startsWith("merge")).map((a, i) => `${a} AS a${i}`).join(", ");
    for (const kind of KINDS) {
      const sql = `${STREAM(kind.eventTime)}SELECT k, ${aggs} FROM s GROUP BY k, ${kind.window}`;
      const lines = input(4242, 3000, 1000, kind.eventTime, kind.startOffset);
      const options = { sendError: true, isEventTime: kind.eventTime };
      const inc = await run(sql, lines, options);
      const buf = await run(sql, lines, { ...options, windowEvaluator: "buffered" });
      if (inc.out !== buf.out) throw new Error(`${kind.name}: ${sql}\n${firstDifference(inc.out, buf.out)}`);
    }
  });

  test("keys that are property names or array indexes group like any other key, in first-appearance order", async () => {
    const keys = ["__proto__", "constructor", "toString", "hasOwnProperty", "", "10", "2", "01", "4294967295", "-1", "1.5", "length"];
    const sql = `${STREAM(false)}SELECT k, count(*) AS n, sum(x) AS sx FROM s GROUP BY k, TUMBLINGWINDOW(ss, 10)`;
    const t0 = 1_700_000_000_000;
    const lines = [JSON.stringify({ ts: t0 })];
    for (let i = 0; i < 3 * keys.length; i++) lines.push(JSON.stringify({ ts: t0 + 1 + i, data: { k: keys[(i * 5) % keys.length], x: i } }));
    const inc = await run(sql, lines, {});
    const buf = await run(sql, lines, { windowEvaluator: "buffered" });
    expect(inc.out).toBe(buf.out);
    const rows = JSON.parse(inc.out) as { k: string; n: number; sx: number }[];
    const order = Array.from({ length: keys.length }, (_, i) => keys[(i * 5) % keys.length]);
    expect(rows.map((r) => r.k)).toEqual(order);
    expect(rows.every((r) => r.n === 3)).toBe(true);
  });

  test("event time drops the same late rows on both evaluators and counts them as lost", async () => {
    const sql = STREAM(true) + "SELECT k, count(*) AS n FROM s GROUP BY k, TUMBLINGWINDOW(ss, 1)";
    const lines = input(7, 400, 5, true);
    const inc = await run(sql, lines, { isEventTime: true });
    const buf = await run(sql, lines, { isEventTime: true, windowEvaluator: "buffered" });
    expect(inc.lost).toBeGreaterThan(0);
    expect(inc.lost).toBe(buf.lost);
    expect(inc.out).toBe(buf.out);
  });
});
