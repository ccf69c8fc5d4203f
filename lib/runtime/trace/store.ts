/**
 * The local trace store (`openTelemetry.enableLocalStorage`, config-and-cli.md §2.7): the most
 * recent `localTraceCapacity` traces in memory, oldest evicted first, each bounded in spans. It
 * answers `GET /trace/rule/{ruleID}` and `GET /trace/{id}` (rest-api.md §15).
 */
import { rfc3339Nano, type Span } from "./span.ts";

/** Spans kept per trace: a message fanned out without end (a huge unnest) cannot grow one trace unboundedly. */
export const MAX_SPANS_PER_TRACE = 1024;

interface StoredTrace {
  readonly ruleId: string;
  readonly spans: Span[];
}

/** A span as `GET /trace/{id}` returns it (eKuiper's LocalSpan; key order is the interface). */
export interface TraceNode {
  name: string;
  traceID: string;
  spanID: string;
  parentSpanID?: string;
  attribute?: Record<string, string>;
  links?: { TraceID: string }[];
  startTime: string;
  endTime: string;
  ruleID: string;
  ChildSpan: TraceNode[];
}

export class LocalTraceStore {
  /** Insertion order is age: the first key is the oldest trace. */
  private readonly traces = new Map<string, StoredTrace>();
  /** Spans refused because their trace was full. */
  dropped = 0;

  constructor(readonly capacity: number) {}

  add(span: Span): void {
    const t = this.traces.get(span.traceId);
    if (t) {
      if (t.spans.length >= MAX_SPANS_PER_TRACE) this.dropped++;
      else t.spans.push(span);
      return;
    }
    this.traces.set(span.traceId, { ruleId: span.ruleId, spans: [span] });
    if (this.traces.size > this.capacity) {
      const oldest = this.traces.keys().next().value;
      if (oldest !== undefined) this.traces.delete(oldest);
    }
  }

  get size(): number {
    return this.traces.size;
  }

  /** Trace ids of `ruleId`, most recent first; `limit` ≤ 0 means all. */
  traceIds(ruleId: string, limit: number): string[] {
    const all: string[] = [];
    for (const [id, t] of this.traces) if (t.ruleId === ruleId) all.push(id);
    all.reverse();
    return limit > 0 && all.length > limit ? all.slice(0, limit) : all;
  }

  /** The span tree of a trace from its root (the earliest span without a parent in the trace), or undefined. */
  tree(traceId: string): TraceNode | undefined {
    const t = this.traces.get(traceId);
    if (!t) return undefined;
    const nodes = new Map<string, TraceNode>();
    for (const s of t.spans) nodes.set(s.spanId, toNode(s));
    const spans = t.spans.slice().sort((a, b) => a.start - b.start);
    let root: TraceNode | undefined;
    for (const s of spans) {
      const n = nodes.get(s.spanId)!;
      const parent = s.parentSpanId ? nodes.get(s.parentSpanId) : undefined;
      if (parent) parent.ChildSpan.push(n);
      else root ??= n;
    }
    return root;
  }
}

function toNode(s: Span): TraceNode {
  const n: TraceNode = { name: s.name, traceID: s.traceId, spanID: s.spanId } as TraceNode;
  if (s.parentSpanId) n.parentSpanID = s.parentSpanId;
  const keys = Object.keys(s.attributes);
  if (keys.length) {
    // A Go map: keys in byte order.
    const attr: Record<string, string> = {};
    for (const k of keys.sort()) attr[k] = s.attributes[k]!;
    n.attribute = attr;
  }
  if (s.links?.length) n.links = s.links.map((l) => ({ TraceID: l.traceId }));
  n.startTime = rfc3339Nano(s.start);
  n.endTime = rfc3339Nano(s.end);
  n.ruleID = s.ruleId;
  n.ChildSpan = [];
  return n;
}
