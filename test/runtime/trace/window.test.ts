/**
 * Tracing a processing-time window whose wall-clock timer is late (rest-api.md §15, windows §3.1):
 * the next row's arrival fires the timer first. That emission is the timer's, a trace rooted at
 * the window linked to the rows it held; the arriving row's trace ends at the window, and the row
 * is linked from the emission of its own window. Driven by row times and `advance`, never by the
 * real timer (a day-long window's first timeout is up to a day away). Day windows, because an
 * hour window's first end is the current hour's start between 01:00 and 02:00 (the alignment quirk
 * of windows §3.2): it would close at once, empty.
 */
import { afterEach, expect, test } from "bun:test";
import { createFunctionRegistry } from "../../../lib/functions/index.ts";
import { Tuple } from "../../../lib/expr/row.ts";
import { StdoutSink } from "../../../lib/connectors/stdio/stdout.ts";
import { planSelect } from "../../../lib/plan/plan.ts";
import { streamDef } from "../../../lib/plan/streams.ts";
import { Topology } from "../../../lib/runtime/topology.ts";
import { RuleTracer } from "../../../lib/runtime/trace/rule-tracer.ts";
import { LocalTraceStore, type TraceNode } from "../../../lib/runtime/trace/store.ts";
import { findSpan } from "../../helpers/trace.ts";
import { parseRuleFile } from "../../../lib/sql/parse.ts";
import { UTC } from "../../../lib/value/time.ts";
import { WallClock } from "../../../lib/ops/window/clock.ts";

const DAY = 86_400_000;
const clocks: WallClock[] = [];
afterEach(() => {
  for (const c of clocks.splice(0)) c.stop();
});

/** The tree as `name(child, child)`. */
function shape(n: TraceNode): string {
  return n.ChildSpan.length ? `${n.name}(${n.ChildSpan.map(shape).join(", ")})` : n.name;
}

/**
 * A traced rule on a wall clock; `send` pushes one message at row time `ts` the way a traced source
 * does. Its operators may spread an item across turns (`turnMs`, 0: after 64 rows) unless traced.
 */
function traced(select: string) {
  const functions = createFunctionRegistry();
  const file = parseRuleFile(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="in");\n${select}`, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const clock = new WallClock();
  clocks.push(clock);
  const now = () => clock.now();
  const plan = planSelect(file.select, defs, { functions, env: { now, zone: UTC, ruleId: "r", ruleStart: now() }, zone: UTC, lateTolerance: 0 }).plan;
  const sink = new StdoutSink("array", () => {}, now);
  const topo = new Topology(plan, { now, sendError: true, clock, zone: UTC, turnMs: 0 }, [sink]);
  const store = new LocalTraceStore(100);
  const tracer = new RuleTracer("r", "always", { record: (s) => store.add(s) });
  topo.trace(tracer);
  const send = (a: number, ts: number): string => {
    const span = tracer.beginMessage("source_s", null, JSON.stringify({ a }))!;
    tracer.current = span;
    try {
      topo.ingest("s", new Tuple({ a }, null, ts, "s"));
    } finally {
      tracer.current = null;
      tracer.close(span);
    }
    return span.traceId;
  };
  const trees = () => store.traceIds("r", 0).map((id) => store.tree(id)!);
  return { clock, send, trees };
}

for (const [kind, select, emitted] of [
  ["incremental (count folded as rows arrive)", "SELECT count(*) AS n FROM s GROUP BY TumblingWindow(dd, 1)", () => `[{"n":1}]`],
  ["holding its rows", "SELECT a FROM s GROUP BY TumblingWindow(dd, 1)", (a: number) => `[{"a":${a}}]`],
] as const) {
  test(`a window ${kind} closed by a row's arrival before its late timer: the timer's emission, linked to the rows it held`, () => {
    const { clock, send, trees } = traced(select);
    const start = clock.now();
    const first = send(1, start);
    // Past the boundary (the next day) before the timer has fired.
    const second = send(2, start + DAY);
    // The first window was emitted on the arrival of the second row, but not inside its trace.
    const source = (id: string) => trees().find((x) => x.traceID === id)!;
    expect(shape(source(first))).toBe("source_s(op_2_window)");
    expect(shape(source(second))).toBe("source_s(op_2_window)");
    const emissions = () => trees().filter((x) => x.name === "op_2_window");
    expect(emissions()).toHaveLength(1);
    const one = emissions()[0]!;
    expect(shape(one)).toBe("op_2_window(op_3_project(sink_stdout_0))");
    expect(one.parentSpanID).toBeUndefined();
    expect(findSpan(one, "sink_stdout_0")!.attribute!.data).toBe(emitted(1));
    expect(one.links).toEqual([{ TraceID: first }]);
    // The second row's window closes on its timer: linked to the second row.
    clock.advance(start + 2 * DAY);
    expect(emissions()).toHaveLength(2);
    const two = emissions().find((e) => e !== one && e.traceID !== one.traceID)!;
    expect(shape(two)).toBe("op_2_window(op_3_project(sink_stdout_0))");
    expect(findSpan(two, "sink_stdout_0")!.attribute!.data).toBe(emitted(2));
    expect(two.links).toEqual([{ TraceID: second }]);
  });
}

test("a count window's emission runs in the trace of the row that fills it; that row is not linked from the next window", () => {
  const { send, trees } = traced("SELECT count(*) AS n FROM s GROUP BY CountWindow(2)");
  const ids = [1, 2, 3, 4].map((a) => send(a, 0));
  const project = (id: string) => findSpan(trees().find((x) => x.traceID === id)!, "op_3_project")!;
  expect(shape(trees().find((x) => x.traceID === ids[1])!)).toBe("source_s(op_2_window(op_3_project(sink_stdout_0)))");
  expect(project(ids[1]!).links).toEqual([{ TraceID: ids[0]! }]);
  expect(project(ids[3]!).links).toEqual([{ TraceID: ids[2]! }]);
});

test("a traced window too big for one turn is still projected and sent within its emission's trace", () => {
  const { clock, send, trees } = traced("SELECT a FROM s GROUP BY TumblingWindow(dd, 1)");
  const start = clock.now();
  for (let a = 0; a < 200; a++) send(a, start);
  send(200, start + DAY);
  const one = trees().find((x) => x.name === "op_2_window")!;
  expect(shape(one)).toBe("op_2_window(op_3_project(sink_stdout_0))");
  expect(JSON.parse(findSpan(one, "sink_stdout_0")!.attribute!.data as string)).toHaveLength(200);
  expect(one.links).toHaveLength(128); // MAX_LINKS
});
