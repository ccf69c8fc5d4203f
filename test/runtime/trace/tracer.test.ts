/**
 * Rule tracing in the runtime (rest-api.md §5, §15): one trace per message, a span per node with
 * the data it saw, parents that make the tree, the `always` and `head` strategies, `traceparent`
 * continuation from an HTTP push, window emissions linked to their rows' traces, the store's bound,
 * and an untraced wiring after the stop.
 */
import { afterEach, expect, test } from "bun:test";
import { DataServer } from "../../../lib/connectors/http/server.ts";
import { TraceHub } from "../../../lib/runtime/trace/hub.ts";
import type { LocalTraceStore, TraceNode } from "../../../lib/runtime/trace/store.ts";
import { findSpan } from "../../helpers/trace.ts";
import type { RunHandle } from "../../../lib/runtime/rule.ts";
import { metric, streams, testRuntime, waitFor, type TestRuntime } from "../../helpers/runtime.ts";
import { createNetGuard } from "../../../lib/net/guard.ts";

const defs = streams(
  `CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="in")`,
  `CREATE STREAM hp () WITH (TYPE="httppush", DATASOURCE="/hp", FORMAT="json")`,
);

/** A hub keeping its traces in memory (enableLocalStorage off). */
function hub(capacity = 100): TraceHub {
  return new TraceHub({ serviceName: "floe-test", enableRemoteCollector: false, remoteEndpoint: "", localTraceCapacity: capacity, localTraceMaxBytes: 64 * 1024 * 1024, enableLocalStorage: false }, createNetGuard(), () => {}, "");
}

/** Its store, read synchronously. */
const mem = (h: TraceHub) => h.store as LocalTraceStore;

const open: RunHandle[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.stop();
});

async function started(t: TestRuntime, def: Parameters<TestRuntime["rule"]>[0]): Promise<RunHandle> {
  const run = await t.rule(def, defs).start();
  open.push(run);
  return run;
}

/** The tree as `name(child, child)` with each span's parent checked against its place. */
function shape(n: TraceNode, parent?: TraceNode): string {
  if (parent) {
    expect(n.parentSpanID).toBe(parent.spanID);
    expect(n.traceID).toBe(parent.traceID);
  }
  expect(Date.parse(n.endTime)).toBeGreaterThanOrEqual(Date.parse(n.startTime));
  return n.ChildSpan.length ? `${n.name}(${n.ChildSpan.map((c) => shape(c, n)).join(", ")})` : n.name;
}

test("a traced message is one tree: source, each node with the data it saw, every sink", async () => {
  const h = hub();
  const t = testRuntime({ traces: h });
  const rule = await started(t, { id: "r1", sql: "SELECT a, a * 2 AS b FROM m WHERE a > 1", actions: [{ nop: {} }, { log: {} }] });
  rule.trace("always");
  await t.env.pubsub.publish("in", { a: 2 });
  await t.env.pubsub.publish("in", { a: 0 });
  await waitFor(() => metric(rule, "op_2_filter_0_records_in_total") === 2, "both messages");
  const ids = mem(h).traceIds("r1", 0);
  expect(ids).toHaveLength(2);
  // Most recent first: the filtered-out message's trace ends at the filter.
  const dropped = mem(h).tree(ids[0]!)!;
  expect(shape(dropped)).toBe("source_m(op_2_filter)");
  const kept = mem(h).tree(ids[1]!)!;
  expect(shape(kept)).toBe("source_m(op_2_filter(op_3_project(sink_nop_0, sink_log_1)))");
  expect(kept.parentSpanID).toBeUndefined();
  expect(kept.ruleID).toBe("r1");
  expect(kept.attribute).toEqual({ data: '{"a":2}' });
  expect(findSpan(kept, "op_3_project")!.attribute).toEqual({ data: '{"a":2}' });
  expect(findSpan(kept, "sink_nop_0")!.attribute).toEqual({ data: '[{"a":2,"b":4}]' });
  expect(Object.keys(kept)).toEqual(["name", "traceID", "spanID", "attribute", "startTime", "endTime", "ruleID", "ChildSpan"]);
  expect(kept.traceID).toMatch(/^[0-9a-f]{32}$/);
  expect(kept.spanID).toMatch(/^[0-9a-f]{16}$/);
  expect(kept.startTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);
  expect(mem(h).traceIds("r1", 1)).toEqual([ids[0]!]);
  expect(mem(h).traceIds("other", 0)).toEqual([]);
});

test("stopping the trace restores the plain wiring: later messages leave no trace", async () => {
  const h = hub();
  const t = testRuntime({ traces: h });
  const rule = await started(t, { id: "r2", sql: "SELECT a FROM m", actions: [{ nop: {} }] });
  await t.env.pubsub.publish("in", { a: 1 });
  rule.trace("always");
  await t.env.pubsub.publish("in", { a: 2 });
  rule.trace(undefined);
  await t.env.pubsub.publish("in", { a: 3 });
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 3, "three");
  const ids = mem(h).traceIds("r2", 0);
  expect(ids).toHaveLength(1);
  expect(mem(h).tree(ids[0]!)!.attribute!.data).toBe('{"a":2}');
  // Started again: traced again, through fresh stand-ins.
  rule.trace("always");
  await t.env.pubsub.publish("in", { a: 4 });
  await waitFor(() => mem(h).traceIds("r2", 0).length === 2, "a second trace");
  expect(shape(mem(h).tree(mem(h).traceIds("r2", 0)[0]!)!)).toBe("source_m(op_2_project(sink_nop_0))");
});

test("head traces only messages that arrive with a traceparent, continuing the upstream trace; always traces all", async () => {
  const h = hub();
  const t = testRuntime({ traces: h, dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }) });
  const rule = await started(t, { id: "r3", sql: "SELECT v FROM hp", actions: [{ nop: {} }] });
  const url = `http://127.0.0.1:${t.env.dataServer.port}/hp`;
  const post = async (v: number, traceparent?: string) => {
    const res = await fetch(url, { method: "POST", body: JSON.stringify({ v }), headers: traceparent ? { traceparent } : {} });
    expect(await res.text()).toBe("ok");
  };
  const upstreamTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const upstreamSpan = "00f067aa0ba902b7";
  rule.trace("head");
  await post(1);
  await post(2, `00-${upstreamTrace}-${upstreamSpan}-01`);
  await post(3, "00-not-a-valid-header-01");
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 3, "three");
  expect(mem(h).traceIds("r3", 0)).toEqual([upstreamTrace]);
  const tree = mem(h).tree(upstreamTrace)!;
  expect(tree.parentSpanID).toBe(upstreamSpan);
  expect(shape(tree)).toBe("source_hp(op_2_decoder(op_3_project(sink_nop_0)))");
  expect(tree.attribute).toEqual({ data: '{"v":2}' });

  rule.trace("always");
  await post(4);
  await post(5, `00-${"a".repeat(32)}-${"b".repeat(16)}-00`);
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 5, "five");
  const ids = mem(h).traceIds("r3", 0);
  expect(ids).toHaveLength(3);
  expect(ids[0]).toBe("a".repeat(32));
  expect(mem(h).tree(ids[1]!)!.parentSpanID).toBeUndefined();
});

test("a decode failure and a row failure show as the span's error", async () => {
  const h = hub();
  const t = testRuntime({ traces: h, dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }) });
  const rule = await started(t, { id: "r4", sql: "SELECT 10 / v AS q FROM hp", actions: [{ nop: {} }] });
  rule.trace("always");
  const url = `http://127.0.0.1:${t.env.dataServer.port}/hp`;
  await fetch(url, { method: "POST", body: "{not json" });
  await fetch(url, { method: "POST", body: JSON.stringify({ v: 0 }) });
  await waitFor(() => mem(h).traceIds("r4", 0).length === 2, "two traces");
  const [rowFail, decodeFail] = mem(h).traceIds("r4", 0).map((id) => mem(h).tree(id)!);
  expect(shape(decodeFail!)).toBe("source_hp");
  expect(decodeFail!.attribute!.data).toBe("{not json");
  expect(decodeFail!.attribute!.error).toBe(metric(rule, "op_2_decoder_0_last_exception") as string);
  const project = findSpan(rowFail!, "op_3_project")!;
  expect(project.attribute!.error).toBe(metric(rule, "op_3_project_0_last_exception") as string);
  expect(project.attribute!.error).toContain("run Select error");
});

test("a count window's emission continues the message that fills it and links the other rows' traces", async () => {
  const h = hub();
  const t = testRuntime({ traces: h });
  const rule = await started(t, { id: "r5", sql: "SELECT a FROM m GROUP BY CountWindow(2)", actions: [{ nop: {} }] });
  rule.trace("always");
  await t.env.pubsub.publish("in", { a: 1 });
  await t.env.pubsub.publish("in", { a: 2 });
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 1, "one window");
  const [second, first] = mem(h).traceIds("r5", 0);
  expect(shape(mem(h).tree(first!)!)).toBe("source_m(op_2_window)");
  const tree = mem(h).tree(second!)!;
  expect(shape(tree)).toBe("source_m(op_2_window(op_3_project(sink_nop_0)))");
  const project = findSpan(tree, "op_3_project")!;
  expect(project.links).toEqual([{ TraceID: first! }]);
  expect(project.attribute!.data).toBe('[{"a":1},{"a":2}]');
});

test("only the node right after the window carries the links", async () => {
  const h = hub();
  const t = testRuntime({ traces: h });
  const rule = await started(t, { id: "r5b", sql: "SELECT a FROM m GROUP BY CountWindow(2) ORDER BY a DESC", actions: [{ nop: {} }] });
  rule.trace("always");
  await t.env.pubsub.publish("in", { a: 1 });
  await t.env.pubsub.publish("in", { a: 2 });
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 1, "one window");
  const [second, first] = mem(h).traceIds("r5b", 0);
  const tree = mem(h).tree(second!)!;
  expect(shape(tree)).toBe("source_m(op_2_window(op_3_order(op_4_project(sink_nop_0))))");
  expect(findSpan(tree, "op_3_order")!.links).toEqual([{ TraceID: first! }]);
  expect(findSpan(tree, "op_4_project")!.links).toBeUndefined();
  expect(findSpan(tree, "sink_nop_0")!.attribute!.data).toBe('[{"a":2},{"a":1}]');
});

test("a window closed by its timer starts a trace rooted at the window, linked to its rows' traces", async () => {
  const h = hub();
  const t = testRuntime({ traces: h });
  // A row may arrive past a boundary before the late timer has fired: the window it closes is
  // still the timer's emission (trace-window.test.ts drives that case deterministically).
  const rule = await started(t, { id: "r6", sql: "SELECT count(*) AS n FROM m GROUP BY TumblingWindow(ms, 100)", actions: [{ nop: {} }] });
  rule.trace("always");
  await t.env.pubsub.publish("in", { a: 1 });
  await t.env.pubsub.publish("in", { a: 2 });
  // The two rows may fall into one window or two (a boundary between them): count what was emitted.
  const trees = () => mem(h).traceIds("r6", 0).map((id) => mem(h).tree(id)!);
  const emissions = () => trees().filter((x) => x.name === "op_2_window");
  const counted = () => emissions().reduce((n, e) => n + Number(JSON.parse(findSpan(e, "sink_nop_0")!.attribute!.data)[0].n), 0);
  await waitFor(() => counted() === 2, "both rows emitted", 5000);
  const sources = trees().filter((x) => x.name === "source_m");
  expect(sources).toHaveLength(2);
  for (const e of emissions()) {
    expect(shape(e)).toBe("op_2_window(op_3_project(sink_nop_0))");
    expect(e.parentSpanID).toBeUndefined();
    // count(*) is folded as rows arrive (an incremental window): the links come from what it took in.
    expect(e.links!.length).toBe(Number(JSON.parse(findSpan(e, "sink_nop_0")!.attribute!.data)[0].n));
  }
  expect(
    emissions()
      .flatMap((e) => e.links!.map((l) => l.TraceID))
      .sort(),
  ).toEqual(sources.map((x) => x.traceID).sort());
});

test("the local store keeps the most recent localTraceCapacity traces", async () => {
  const h = hub(3);
  const t = testRuntime({ traces: h });
  const rule = await started(t, { id: "r7", sql: "SELECT a FROM m", actions: [{ nop: {} }] });
  rule.trace("always");
  for (let a = 0; a < 5; a++) await t.env.pubsub.publish("in", { a });
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 5, "five");
  const ids = mem(h).traceIds("r7", 0);
  expect(ids).toHaveLength(3);
  expect(ids.map((id) => mem(h).tree(id)!.attribute!.data)).toEqual(['{"a":4}', '{"a":3}', '{"a":2}']);
  expect(mem(h).size).toBe(3);
});

test("a graph rule's traced message follows its edges (switch ports included)", async () => {
  const h = hub();
  const t = testRuntime({ traces: h });
  const graph = {
    nodes: {
      src: { type: "source", nodeType: "memory", props: { datasource: "in" } },
      sw: { type: "operator", nodeType: "switch", props: { cases: ["a > 1", "a <= 1"], stopAtFirstMatch: true } },
      hi: { type: "sink", nodeType: "nop", props: {} },
      lo: { type: "sink", nodeType: "log", props: {} },
    },
    topo: { sources: ["src"], edges: { src: ["sw"], sw: [["hi"], ["lo"]] } },
  };
  const rule = await started(t, { id: "r8", sql: "", actions: [], graph });
  rule.trace("always");
  await t.env.pubsub.publish("in", { a: 5 });
  await t.env.pubsub.publish("in", { a: 0 });
  await waitFor(() => mem(h).traceIds("r8", 0).length === 2, "two traces");
  const [low, high] = mem(h).traceIds("r8", 0).map((id) => shape(mem(h).tree(id)!));
  expect(high).toBe("source_src(op_sw(sink_hi))");
  expect(low).toBe("source_src(op_sw(sink_lo))");
});
