/** The parts of rule tracing: W3C traceparent, ids, times, the local store's bounds and trees, OTLP encoding, settings. */
import { expect, test } from "bun:test";
import { fromDoc } from "../../../lib/config/kuiper.ts";
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent } from "../../../lib/runtime/trace/ids.ts";
import { otlpBody, tracesUrl } from "../../../lib/runtime/trace/otlp.ts";
import { rfc3339Nano, Span, unixNano } from "../../../lib/runtime/trace/span.ts";
import { LocalTraceStore, MAX_SPANS_PER_TRACE } from "../../../lib/runtime/trace/store.ts";

test("traceparent: valid headers continue their trace, malformed ones are ignored", () => {
  const t = "4bf92f3577b34da6a3ce929d0e0e4736";
  const s = "00f067aa0ba902b7";
  expect(parseTraceparent(`00-${t}-${s}-01`)).toEqual({ traceId: t, spanId: s });
  expect(parseTraceparent(`00-${t.toUpperCase()}-${s}-00`)).toEqual({ traceId: t, spanId: s });
  // A future version may carry more fields; version 00 may not.
  expect(parseTraceparent(`01-${t}-${s}-01-extra`)).toEqual({ traceId: t, spanId: s });
  for (const bad of [`00-${t}-${s}-01-extra`, `ff-${t}-${s}-01`, `00-${"0".repeat(32)}-${s}-01`, `00-${t}-${"0".repeat(16)}-01`, `00-${t}-${s}`, "", null, 42, "x".repeat(600)])
    expect(parseTraceparent(bad)).toBeNull();
  expect(formatTraceparent(t, s)).toBe(`00-${t}-${s}-01`);
});

test("ids are lower-case hex of W3C widths and do not repeat", () => {
  const ids = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const t = newTraceId();
    const s = newSpanId();
    expect(t).toMatch(/^[0-9a-f]{32}$/);
    expect(s).toMatch(/^[0-9a-f]{16}$/);
    ids.add(t).add(s);
  }
  expect(ids.size).toBe(4000);
});

test("times: RFC3339Nano in UTC with the fraction trimmed, OTLP nanoseconds as a decimal string", () => {
  // Microsecond resolution: a double of epoch ms holds about three decimals.
  const ms = Date.UTC(2024, 0, 2, 3, 4, 5, 120) + 0.034;
  expect(rfc3339Nano(ms)).toBe("2024-01-02T03:04:05.120034Z");
  expect(rfc3339Nano(Date.UTC(2024, 0, 2, 3, 4, 5, 100))).toBe("2024-01-02T03:04:05.1Z");
  expect(rfc3339Nano(Date.UTC(2024, 0, 2, 3, 4, 5))).toBe("2024-01-02T03:04:05Z");
  expect(unixNano(ms)).toBe("1704164645120034000");
});

function span(name: string, traceId: string, parent: Span | null, ruleId = "r", remote = ""): Span {
  const s = new Span(name, traceId, parent, remote, ruleId, null);
  s.end = s.start;
  return s;
}

test("the store evicts the oldest trace past its capacity and bounds the spans of one trace", () => {
  const st = new LocalTraceStore(2);
  const a = span("a", "t1", null, "r1");
  st.add(a);
  st.add(span("b", "t2", null, "r2"));
  st.add(span("c", "t1", a, "r1"));
  const d = span("d", "t3", null, "r1");
  st.add(d);
  expect(st.size).toBe(2);
  expect(st.tree("t1")).toBeUndefined();
  expect(st.traceIds("r1", 0)).toEqual(["t3"]);
  expect(st.traceIds("r2", 5)).toEqual(["t2"]);
  for (let i = 0; i < MAX_SPANS_PER_TRACE + 10; i++) st.add(span("x", "t3", d));
  expect(st.dropped).toBe(11);
  // Past the first round of the ring: the newest first, the evicted gone.
  for (const t of ["t4", "t5", "t6"]) st.add(span("e", t, null, "r1"));
  expect(st.traceIds("r1", 0)).toEqual(["t6", "t5"]);
  expect(st.traceIds("r1", 1)).toEqual(["t6"]);
});

test("a tree hangs each span under its parent; spans recorded child-first still give one root", () => {
  const st = new LocalTraceStore(10);
  const root = span("source_s", "t", null, "r", "upstream");
  const mid = span("op_2_project", "t", root);
  const leaf = span("sink_nop_0", "t", mid);
  root.attributes.data = '{"a":1}';
  root.attributes.error = "bad";
  // Spans end (and are recorded) innermost first.
  for (const s of [leaf, mid, root]) st.add(s);
  const tree = st.tree("t")!;
  expect(tree.name).toBe("source_s");
  expect(tree.parentSpanID).toBe("upstream");
  expect(tree.spanID).toMatch(/^[0-9a-f]{16}$/);
  expect(Object.keys(tree.attribute!)).toEqual(["data", "error"]);
  expect(tree.ChildSpan.map((c) => c.name)).toEqual(["op_2_project"]);
  expect(tree.ChildSpan[0]!.parentSpanID).toBe(tree.spanID);
  expect(tree.ChildSpan[0]!.ChildSpan[0]!.name).toBe("sink_nop_0");
  expect(tree.ChildSpan[0]!.ChildSpan[0]!.ChildSpan).toEqual([]);
  expect("links" in tree).toBe(false);
  // Ids are drawn once: a second read gives the same tree.
  expect(st.tree("t")).toEqual(tree);
});

test("OTLP: the collector URL, and one resource with the service name and spans with hex ids", () => {
  expect(tracesUrl("localhost:4318")).toBe("http://localhost:4318/v1/traces");
  expect(tracesUrl("https://otel:4318/")).toBe("https://otel:4318/v1/traces");
  expect(tracesUrl("http://otel:4318/v1/traces")).toBe("http://otel:4318/v1/traces");
  const s = new Span("op_3_window", "a".repeat(32), null, "", "r1", [{ traceId: "c".repeat(32), spanId: "d".repeat(16) }]);
  s.end = s.start + 1;
  s.attributes.error = "boom";
  const body = JSON.parse(otlpBody("svc", [s]));
  const rs = body.resourceSpans[0];
  expect(rs.resource.attributes).toEqual([{ key: "service.name", value: { stringValue: "svc" } }]);
  const o = rs.scopeSpans[0].spans[0];
  expect(o).toMatchObject({ traceId: "a".repeat(32), spanId: s.spanId, name: "op_3_window", kind: 1, status: { code: 2, message: "boom" } });
  expect(o.links).toEqual([{ traceId: "c".repeat(32), spanId: "d".repeat(16) }]);
  expect("parentSpanId" in o).toBe(false);
  expect(BigInt(o.endTimeUnixNano) - BigInt(o.startTimeUnixNano)).toBe(1_000_000n);
});

test("openTelemetry settings: eKuiper's defaults, and the section read case-insensitively", () => {
  expect(fromDoc({}).openTelemetry).toEqual({ serviceName: "kuiperd-service", enableRemoteCollector: false, remoteEndpoint: "localhost:4318", localTraceCapacity: 2048, localTraceMaxBytes: 67108864, enableLocalStorage: false });
  const c = fromDoc({ opentelemetry: { servicename: "x", enableremotecollector: true, remoteendpoint: "h:1", localtracecapacity: 5, enablelocalstorage: "true" } });
  expect(c.openTelemetry).toEqual({ serviceName: "x", enableRemoteCollector: true, remoteEndpoint: "h:1", localTraceCapacity: 5, localTraceMaxBytes: 67108864, enableLocalStorage: true });
  expect(fromDoc({ opentelemetry: { localtracecapacity: 0 } }).openTelemetry.localTraceCapacity).toBe(2048);
});
