/**
 * Rule tracing through the REST API (rest-api.md §5 "Tracing a rule", §15) on a real `floe serve`:
 * start a trace on a running rule, push messages through an httppush stream (with and without a
 * W3C `traceparent`), list and fetch the traces from the local store, and receive the same spans
 * as OTLP/HTTP JSON in a collector the test runs; `POST /tracer` switches the export.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../helpers/data-server.ts";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

interface Node {
  name: string;
  traceID: string;
  spanID: string;
  parentSpanID?: string;
  attribute?: Record<string, string>;
  startTime: string;
  endTime: string;
  ruleID: string;
  ChildSpan: Node[];
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: { stringValue: string } }[];
}

/** A tiny OTLP/HTTP collector: every span it received, with the service name of its resource. */
const received: { service: string; span: OtlpSpan }[] = [];
const contentTypes: string[] = [];
const collector = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/v1/traces") return new Response("no", { status: 404 });
    contentTypes.push(req.headers.get("content-type") ?? "");
    const body = (await req.json()) as {
      resourceSpans: { resource: { attributes: { key: string; value: { stringValue: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
    };
    for (const rs of body.resourceSpans) {
      const service = rs.resource.attributes.find((a) => a.key === "service.name")!.value.stringValue;
      for (const ss of rs.scopeSpans) for (const span of ss.spans) received.push({ service, span });
    }
    return Response.json({});
  },
});

let d: DaemonProc;
let push: (v: number, traceparent?: string) => Promise<void>;

const UPSTREAM_TRACE = "0af7651916cd43dd8448eb211c80319c";
const UPSTREAM_SPAN = "b7ad6b7169203331";

beforeAll(async () => {
  const yaml = [
    "openTelemetry:",
    "  serviceName: floe-e2e",
    "  enableRemoteCollector: true",
    `  remoteEndpoint: 127.0.0.1:${collector.port}`,
    "  enableLocalStorage: true",
    "  localTraceCapacity: 4",
    "",
  ].join("\n");
  const port = freePort();
  // The collector listens on loopback: the outbound guard lets the exporter reach it only with enablePrivateNet.
  d = await startFloe(tempHome({ "kuiper.yaml": yaml }), { KUIPER__SOURCE__HTTPSERVERPORT: String(port), KUIPER__BASIC__ENABLEPRIVATENET: "true" });
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM hp () WITH (TYPE="httppush", DATASOURCE="/hp", FORMAT="json")' })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "r1", sql: "SELECT v, v * 10 AS w FROM hp WHERE v > 0", actions: [{ nop: {} }] })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "idle", name: "", sql: "SELECT v FROM hp", actions: [{ nop: {} }], triggered: false })).status).toBe(201);
  push = async (v, traceparent) => {
    const res = await fetch(`http://127.0.0.1:${port}/hp`, { method: "POST", body: JSON.stringify({ v }), headers: traceparent ? { traceparent } : {} });
    expect(await res.text()).toBe("ok");
  };
});

afterAll(async () => {
  if (d && d.proc.exitCode === null) await d.stop();
  collector.stop(true);
});

async function sinkOut(): Promise<number> {
  const s = JSON.parse((await d.call("GET", "/rules/r1/status")).text) as Record<string, number>;
  return s.sink_nop_0_0_records_out_total!;
}

async function traceIds(query = ""): Promise<string[]> {
  const r = await d.call("GET", "/trace/rule/r1" + query);
  expect(r.status).toBe(200);
  return JSON.parse(r.text) as string[];
}

const until = (cond: () => Promise<boolean>, what: string) => waitFor(cond, what, 10_000, 20);

function names(n: Node): string {
  return n.ChildSpan.length ? `${n.name}(${n.ChildSpan.map(names).join(", ")})` : n.name;
}

test("trace start/stop answer eKuiper's errors for unknown and stopped rules", async () => {
  expect(await d.call("POST", "/rules/nope/trace/start", { strategy: "always" })).toMatchObject({ status: 400, text: '{"error":1000,"message":"rule nope isn\'t existed"}\n' });
  expect(await d.call("POST", "/rules/idle/trace/start", { strategy: "always" })).toMatchObject({
    status: 400,
    text: '{"error":1000,"message":"rule  set trace failed due to rule didn\'t started"}\n',
  });
  expect((await d.call("POST", "/rules/r1/trace/start", "")).text).toBe('{"error":1000,"message":"Invalid body: Error decoding json: EOF"}\n');
  expect(await traceIds()).toEqual([]);
});

test("head: only the message with a traceparent is traced, continuing the upstream trace, and exported", async () => {
  const r = await d.call("POST", "/rules/r1/trace/start", { strategy: "HEAD" });
  expect(r).toMatchObject({ status: 200, text: "" });
  const list = JSON.parse((await d.call("GET", "/rules")).text) as { id: string; trace: boolean }[];
  expect(list.find((x) => x.id === "r1")!.trace).toBe(true);
  expect(list.find((x) => x.id === "idle")!.trace).toBe(false);
  await push(1);
  await push(2, `00-${UPSTREAM_TRACE}-${UPSTREAM_SPAN}-01`);
  await until(async () => (await sinkOut()) === 2, "two results");
  expect(await traceIds()).toEqual([UPSTREAM_TRACE]);

  const t = await d.call("GET", `/trace/${UPSTREAM_TRACE}`);
  expect(t.status).toBe(200);
  expect(t.headers.get("content-type")).toBe("application/json");
  const tree = JSON.parse(t.text) as Node;
  expect(names(tree)).toBe("source_hp(op_2_decoder(op_3_filter(op_4_project(sink_nop_0))))");
  expect(t.text).toStartWith(`{"name":"source_hp","traceID":"${UPSTREAM_TRACE}","spanID":"`);
  expect(tree.parentSpanID).toBe(UPSTREAM_SPAN);
  expect(tree.attribute).toEqual({ data: '{"v":2}' });
  expect(tree.ruleID).toBe("r1");
  let n = tree;
  while (n.ChildSpan.length) {
    const c = n.ChildSpan[0]!;
    expect(c.parentSpanID).toBe(n.spanID);
    expect(c.traceID).toBe(UPSTREAM_TRACE);
    expect(Date.parse(c.startTime)).toBeGreaterThanOrEqual(Date.parse(n.startTime));
    n = c;
  }
  expect(n.attribute).toEqual({ data: '[{"v":2,"w":20}]' });

  // The same five spans reach the collector as OTLP JSON, under the configured service name.
  await waitFor(() => received.filter((x) => x.span.traceId === UPSTREAM_TRACE).length === 5, "5 exported spans");
  const spans = received.filter((x) => x.span.traceId === UPSTREAM_TRACE);
  expect(new Set(spans.map((x) => x.service))).toEqual(new Set(["floe-e2e"]));
  expect(contentTypes[0]).toStartWith("application/json");
  const root = spans.find((x) => x.span.name === "source_hp")!.span;
  expect(root.parentSpanId).toBe(UPSTREAM_SPAN);
  expect(root.spanId).toBe(tree.spanID);
  expect(root.attributes).toContainEqual({ key: "data", value: { stringValue: '{"v":2}' } });
  expect(root.attributes).toContainEqual({ key: "ruleID", value: { stringValue: "r1" } });
  expect(BigInt(root.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(root.startTimeUnixNano));
  expect(spans.map((x) => x.span.name).sort()).toEqual(["op_2_decoder", "op_3_filter", "op_4_project", "sink_nop_0", "source_hp"]);
});

test("always: every message is traced; the store keeps localTraceCapacity traces, most recent first; limit", async () => {
  expect((await d.call("POST", "/rules/r1/trace/start", { strategy: "always" })).status).toBe(200);
  for (const v of [0, 3, 4, 5]) await push(v);
  await until(async () => (await sinkOut()) === 5, "five results");
  const ids = await traceIds();
  expect(ids).toHaveLength(4);
  expect(ids).not.toContain(UPSTREAM_TRACE);
  const data = await Promise.all(ids.map(async (id) => (JSON.parse((await d.call("GET", `/trace/${id}`)).text) as Node).attribute!.data));
  expect(data).toEqual(['{"v":5}', '{"v":4}', '{"v":3}', '{"v":0}']);
  // v = 0 stops at the filter.
  expect(names(JSON.parse((await d.call("GET", `/trace/${ids[3]}`)).text) as Node)).toBe("source_hp(op_2_decoder(op_3_filter))");
  expect(await traceIds("?limit=2")).toEqual(ids.slice(0, 2));
  expect(await traceIds("?limit=0")).toEqual(ids);
  expect(await traceIds("?limit=x")).toEqual(ids);
  expect(await d.call("GET", `/trace/${UPSTREAM_TRACE}`)).toMatchObject({ status: 404, text: "Not Found\n" });
  expect(await d.call("GET", "/trace/rule/someone-else")).toMatchObject({ status: 200, text: "[]" });
});

test("trace stop: later messages leave no trace", async () => {
  const before = await traceIds();
  expect(await d.call("POST", "/rules/r1/trace/stop")).toMatchObject({ status: 200, text: "" });
  const list = JSON.parse((await d.call("GET", "/rules")).text) as { id: string; trace: boolean }[];
  expect(list.find((x) => x.id === "r1")!.trace).toBe(false);
  await push(6);
  await until(async () => (await sinkOut()) === 6, "six results");
  expect(await traceIds()).toEqual(before);
});

test("POST /tracer stops and restarts the OTLP export; the local store goes on", async () => {
  expect(await d.call("POST", "/tracer", { action: "stop" })).toMatchObject({ status: 200, text: "success" });
  expect((await d.call("POST", "/rules/r1/trace/start", { strategy: "always" })).status).toBe(200);
  const quiet = "1".repeat(32);
  await push(7, `00-${quiet}-${"2".repeat(16)}-01`);
  await until(async () => (await sinkOut()) === 7, "seven results");
  expect((await traceIds())[0]).toBe(quiet);
  // The exporter sends every second: a fixed wait of two, to show that the stopped one sends nothing.
  await Bun.sleep(2200);
  expect(received.some((x) => x.span.traceId === quiet)).toBe(false);

  const r = await d.call("POST", "/tracer", { service_name: "renamed", action: "start", collector_url: `http://127.0.0.1:${collector.port}` });
  expect(r).toMatchObject({ status: 200, text: "success" });
  const loud = "3".repeat(32);
  await push(8, `00-${loud}-${"4".repeat(16)}-01`);
  await waitFor(() => received.filter((x) => x.span.traceId === loud).length === 5, "exported again");
  expect(new Set(received.filter((x) => x.span.traceId === loud).map((x) => x.service))).toEqual(new Set(["renamed"]));
  expect((await d.call("POST", "/tracer", "{")).status).toBe(400);

  // A REST request with a trace context is a server span of that trace, named after its path (§1.5).
  const caller = "7".repeat(32);
  expect((await d.call("GET", "/rules", undefined, { traceparent: `00-${caller}-${"8".repeat(16)}-01` })).status).toBe(200);
  await waitFor(() => received.some((x) => x.span.traceId === caller), "the request's span");
  const rs = received.find((x) => x.span.traceId === caller)!.span;
  expect(rs).toMatchObject({ name: "/rules", parentSpanId: "8".repeat(16), attributes: [] });
});

test("a restarted rule runs untraced", async () => {
  expect((await d.call("POST", "/rules/r1/restart")).status).toBe(200);
  const list = JSON.parse((await d.call("GET", "/rules")).text) as { id: string; trace: boolean }[];
  expect(list.find((x) => x.id === "r1")!.trace).toBe(false);
  const before = await traceIds();
  await push(9);
  await until(async () => (await sinkOut()) === 1, "one result after the restart");
  expect(await traceIds()).toEqual(before);
});

test("with enableLocalStorage the traces are in <data>/trace.db and outlive a restart", async () => {
  const before = await traceIds();
  expect(before.length).toBeGreaterThan(0);
  expect(existsSync(join(d.dir, "data", "trace.db"))).toBe(true);
  await d.stop();
  d = await startFloe(d.dir, { KUIPER__SOURCE__HTTPSERVERPORT: String(freePort()) });
  expect(await traceIds()).toEqual(before);
  const tree = JSON.parse((await d.call("GET", `/trace/${before[0]}`)).text) as Node;
  expect(tree.traceID).toBe(before[0]!);
});

test("without enableLocalStorage (eKuiper's default) traces are kept in memory, no trace.db", async () => {
  const plain = await startFloe();
  try {
    const sim = 'CREATE STREAM sim () WITH (TYPE="simulator", EXTRA="{\\"data\\":[{\\"v\\":1}],\\"interval\\":20,\\"loop\\":true}")';
    expect((await plain.call("POST", "/streams", { sql: sim })).status).toBe(201);
    expect((await plain.call("POST", "/rules", { id: "m1", sql: "SELECT v FROM sim", actions: [{ nop: {} }] })).status).toBe(201);
    await waitFor(async () => (await plain.call("POST", "/rules/m1/trace/start", { strategy: "always" })).status === 200, "trace started");
    let ids: string[] = [];
    await waitFor(async () => (ids = JSON.parse((await plain.call("GET", "/trace/rule/m1")).text) as string[]).length >= 2, "traces in memory");
    const tree = JSON.parse((await plain.call("GET", `/trace/${ids[0]}`)).text) as Node;
    expect(tree).toMatchObject({ name: "source_sim", traceID: ids[0], ruleID: "m1", attribute: { data: '{"v":1}' } });
    expect(existsSync(join(plain.dir, "data", "trace.db"))).toBe(false);
  } finally {
    await plain.stop();
  }
});
