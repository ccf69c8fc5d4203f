/**
 * The in-memory trace store (`openTelemetry.enableLocalStorage` off, eKuiper's default; on:
 * sqlite-store.ts): the most recent `localTraceCapacity` traces, oldest evicted first, each
 * bounded in spans. It answers `GET /trace/rule/{ruleID}` and `GET /trace/{id}` (rest-api.md §15).
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
  private readonly traces = new Map<string, StoredTrace>();
  /**
   * Trace ids in arrival order, a ring of `capacity`: the oldest is evicted from here, not found
   * by iterating the Map (whose first key sits behind every deleted entry: O(deletions) in JSC).
   */
  private readonly order: string[];
  private head = 0;
  /** Spans refused because their trace was full. */
  dropped = 0;

  constructor(readonly capacity: number) {
    this.order = [];
  }

  add(span: Span): void {
    const t = this.traces.get(span.traceId);
    if (t) {
      if (t.spans.length >= MAX_SPANS_PER_TRACE) this.dropped++;
      else t.spans.push(span);
      return;
    }
    this.traces.set(span.traceId, { ruleId: span.ruleId, spans: [span] });
    const order = this.order;
    if (order.length < this.capacity) {
      order.push(span.traceId);
      return;
    }
    this.traces.delete(order[this.head]!);
    order[this.head] = span.traceId;
    this.head = (this.head + 1) % this.capacity;
  }

  get size(): number {
    return this.traces.size;
  }

  /** Trace ids of `ruleId`, most recent first; `limit` ≤ 0 means all. */
  traceIds(ruleId: string, limit: number): string[] {
    const out: string[] = [];
    const order = this.order;
    const n = order.length;
    // The newest is just before `head` (the ring is full) or last (it is filling).
    for (let k = 1; k <= n; k++) {
      const id = order[(this.head - k + n) % n]!;
      if (this.traces.get(id)!.ruleId !== ruleId) continue;
      out.push(id);
      if (limit > 0 && out.length >= limit) break;
    }
    return out;
  }

  /** The span tree of a trace from its root (the earliest span without a parent in the trace), or undefined. */
  tree(traceId: string): TraceNode | undefined {
    const t = this.traces.get(traceId);
    return t ? spanTree(t.spans) : undefined;
  }
}

/** What a span tree is built from: a Span, or a span read back from the sqlite store. */
export type SpanRecord = Pick<Span, "name" | "traceId" | "spanId" | "parentSpanId" | "ruleId" | "start" | "end" | "attributes" | "links">;

/** The tree of one trace's spans from its root (the earliest span without a parent among them), or undefined. */
export function spanTree(spans: readonly SpanRecord[]): TraceNode | undefined {
  const nodes = new Map<string, TraceNode>();
  for (const s of spans) nodes.set(s.spanId, toNode(s));
  let root: TraceNode | undefined;
  for (const s of spans.slice().sort((a, b) => a.start - b.start)) {
    const n = nodes.get(s.spanId)!;
    const parent = s.parentSpanId ? nodes.get(s.parentSpanId) : undefined;
    if (parent) parent.ChildSpan.push(n);
    else root ??= n;
  }
  return root;
}

function toNode(s: SpanRecord): TraceNode {
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
