/**
 * The rule's cap on what its buffered windows hold (rule options `windowMaxRows`, `windowMaxBytes`;
 * ops/window/held-rows.ts): a row over the cap is dropped and counted on the window node, the status
 * names the cap, the rule keeps running, and the windows that fit are emitted as without a cap.
 * Replayed on the virtual clock through pipe mode.
 */
import { expect, test } from "bun:test";
import { replayLines } from "../../helpers/replay-lines.ts";
import type { PipeResult } from "../../../lib/pipe/request.ts";
import { ByteBudget } from "../../../lib/core/byte-budget.ts";
import { NodeMetrics } from "../../../lib/core/metrics.ts";
import { Tuple } from "../../../lib/expr/row.ts";
import { HeldRows } from "../../../lib/ops/window/held-rows.ts";

const STREAM = `CREATE STREAM s (a BIGINT, i BIGINT, pad STRING) WITH (FORMAT="JSON");\n`;
const EVENT_STREAM = `CREATE STREAM s (a BIGINT, i BIGINT, pad STRING, t BIGINT) WITH (FORMAT="JSON", TIMESTAMP="t");\n`;
const T0 = 1_700_000_000_000;

interface Run {
  /** One array per emission (`emit: array`), each the rows of a window. */
  readonly windows: Record<string, unknown>[][];
  readonly res: PipeResult;
  readonly err: string;
}

async function run(select: string, options: Record<string, unknown>, lines: string[]): Promise<Run> {
  const { out, err, res } = await replayLines((options.isEventTime ? EVENT_STREAM : STREAM) + select, lines, options);
  const windows = out
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>[]);
  return { windows, res, err };
}

/** `n` rows 10 ms apart from `from` ms after T0; `a` cycles 0..9 (1 begins a state window, 5 ends it). */
function rows(n: number, from = 0, pad = ""): string[] {
  const out: string[] = [];
  for (let k = 0; k < n; k++) out.push(JSON.stringify({ ts: T0 + from + 10 * k, data: { a: k % 10, i: k, pad, t: T0 + from + 10 * k } }));
  return out;
}

function windowNode(status: Record<string, number | string>, key: string): number | string {
  const k = Object.keys(status).find((x) => /^op_\d+_window_0_/.test(x) && x.endsWith(key));
  if (k === undefined) throw new Error(`no window ${key} in ${Object.keys(status).join(", ")}`);
  return status[k]!;
}

test("COUNTWINDOW(100000000) over the row cap: rows dropped and counted, the status names the cap, the rule keeps running", async () => {
  const r = await run("SELECT * FROM s GROUP BY COUNTWINDOW(100000000)", { windowMaxRows: 100 }, rows(250));
  expect(r.res.exitCode).toBe(0);
  expect(r.windows).toEqual([]);
  const st = r.res.status!;
  expect(windowNode(st, "_records_lost_total")).toBe(150);
  expect(windowNode(st, "_exceptions_total")).toBe(150);
  expect(windowNode(st, "_last_exception")).toBe("the rule's windows hold their cap of 100 rows (rule option windowMaxRows): row dropped");
  expect(r.res.lost).toBe(150);
});

test("the byte cap: big rows are dropped once the window holds windowMaxBytes, named in the status", async () => {
  const pad = "p".repeat(1000);
  const r = await run("SELECT * FROM s GROUP BY COUNTWINDOW(100000000)", { windowMaxBytes: 64 * 1024 }, rows(200, 0, pad));
  const lost = windowNode(r.res.status!, "_records_lost_total") as number;
  // About 1.2 KB a row as estimated: some fifty rows fit in 64 KiB.
  expect(lost).toBeGreaterThan(130);
  expect(lost).toBeLessThan(170);
  expect(windowNode(r.res.status!, "_last_exception")).toBe("the rule's windows hold their cap of 65536 bytes (rule option windowMaxBytes): row dropped");
});

test("a window over the cap emits what it holds; the next windows, within the cap, are emitted whole", async () => {
  // 1 s tumbling windows: 150 rows in the first (cap 100), then 30 and 30.
  const lines = [...rows(150, 0).map((l, k) => l.replace(`"ts":${T0 + 10 * k}`, `"ts":${T0 + Math.floor((k * 1000) / 150)}`)), ...rows(30, 1000), ...rows(30, 2000)];
  const r = await run("SELECT count(*) AS n FROM s GROUP BY TUMBLINGWINDOW(ss, 1)", { windowMaxRows: 100, windowEvaluator: "buffered" }, lines);
  expect(r.res.exitCode).toBe(0);
  expect(r.windows.map((w) => w[0]!.n)).toEqual([100, 30, 30]);
  expect(windowNode(r.res.status!, "_records_lost_total")).toBe(50);
});

test("no drop without need: a rule within its cap reports no lost records", async () => {
  const r = await run("SELECT count(*) AS n FROM s GROUP BY COUNTWINDOW(5)", { windowMaxRows: 10 }, rows(50));
  expect(r.windows.length).toBe(10);
  expect(Object.keys(r.res.status!).some((k) => k.endsWith("_records_lost_total"))).toBe(false);
});

// Every window kind, buffered, with a cap of 30 rows while up to 100 arrive per window.
// A count window longer than the cap never fills: it drops and never emits (the COUNTWINDOW(huge) case).
const KINDS: [string, string, boolean][] = [
  ["tumbling", "TUMBLINGWINDOW(ss, 1)", true],
  ["hopping", "HOPPINGWINDOW(ss, 2, 1)", true],
  ["sliding", "SLIDINGWINDOW(ss, 1)", true],
  ["session", "SESSIONWINDOW(ss, 10, 1)", true],
  ["count", "COUNTWINDOW(40, 20)", false],
  ["state", "STATEWINDOW(a = 1, i = 350)", true],
];

// Event time: the same kinds but COUNTWINDOW (processing time only, windows §1.1); a last row moves the watermark past the rest.
const EVENT_KINDS = KINDS.filter(([k]) => k !== "count").map(([k, w, e]) => [`event-time ${k}`, w, e] as [string, string, boolean]);

test.each([...KINDS, ...EVENT_KINDS])("%s window: no emission holds more than the cap, every drop is counted, the rule goes on", async (kind, win, emits) => {
  const cap = 30;
  const eventTime = kind.startsWith("event-time");
  // 400 rows 10 ms apart, a 2 s pause (ends a session), 400 more.
  const lines = [...rows(400, 0), ...rows(400, 6000), ...(eventTime ? rows(1, 60_000) : [])];
  const options = { windowMaxRows: cap, windowEvaluator: "buffered", ...(eventTime ? { isEventTime: true, lateTolerance: 0 } : {}) };
  const r = await run(`SELECT count(*) AS n, window_end() AS e FROM s GROUP BY ${win}`, options, lines);
  expect(r.res.exitCode).toBe(0);
  // An empty window (a tick with no row) is `[{}]`.
  const sizes = r.windows.map((w) => (w[0]?.n ?? 0) as number);
  if (emits) expect(sizes.filter((n) => n > 0).length).toBeGreaterThan(1);
  else expect(sizes).toEqual([]);
  for (const n of sizes) expect(n).toBeLessThanOrEqual(cap);
  const st = r.res.status!;
  const lost = windowNode(st, "_records_lost_total") as number;
  expect(lost).toBeGreaterThan(0);
  expect(windowNode(st, "_exceptions_total")).toBe(lost);
  expect(windowNode(st, "_last_exception")).toContain("rule option windowMaxRows");
  expect(windowNode(st, "_records_in_total")).toBe(eventTime ? 801 : 800);
  // The second burst, after the first one's drops, is emitted too: the window takes rows again once it has room.
  if (emits) expect(r.windows.some((w) => ((w[0]?.n ?? 0) as number) > 0 && (w[0]!.e as number) >= T0 + 6000)).toBe(true);
});

test("event time: rows waiting for the watermark count against the cap too (a long lateTolerance), counted on the watermark node", async () => {
  // A one-hour tolerance holds every row of the input at the watermark node.
  const r = await run("SELECT count(*) AS n FROM s GROUP BY TUMBLINGWINDOW(ss, 1)", { windowMaxRows: 50, windowEvaluator: "buffered", isEventTime: true, lateTolerance: 3_600_000 }, rows(200));
  expect(r.res.exitCode).toBe(0);
  const st = r.res.status!;
  const k = Object.keys(st).find((x) => /^op_\d+_watermark_0_records_lost_total$/.test(x));
  expect(k).toBeDefined();
  expect(st[k!]).toBe(150);
  expect(st[k!.replace("records_lost_total", "last_exception")]).toBe("the rows waiting for the watermark hold their cap of 50 rows (rule option windowMaxRows): row dropped");
  expect(r.res.lost).toBe(150);
});

test("sampled sizes follow a change of row size: big rows after small ones reach the byte cap within a few hundred rows", () => {
  const budget = new ByteBudget(1024 * 1024, 1_000_000);
  const held = new HeldRows(budget, new NodeMetrics("op", "w"));
  for (let i = 0; i < 1000; i++) expect(held.admit(new Tuple({ i }, null, i, "s"))).toBe(true);
  const small = budget.bytes;
  let taken = 0;
  const pad = "b".repeat(10_000);
  for (let i = 0; i < 5000; i++) if (held.admit(new Tuple({ i, pad: pad + i }, null, i, "s"))) taken++;
  // (1 MiB − the small rows) / 10 KB ≈ 90 big rows would fit exactly; the mean follows within a few samples of 1 in 32 (about 100–150 here).
  expect(taken).toBeGreaterThan(50);
  expect(taken).toBeLessThan(400);
  expect(budget.bytes).toBeLessThanOrEqual(1024 * 1024);
  expect(budget.bytes).toBeGreaterThan(small);
  expect(budget.droppedRows).toBe(5000 - taken);
});
