/**
 * The in-memory trace store (`openTelemetry.enableLocalStorage` off, eKuiper's default; on:
 * sqlite-store.ts): the most recent traces, oldest evicted first, at most `localTraceCapacity`
 * of them and at most `localTraceMaxBytes` (core/byte-budget.ts) together, each bounded in
 * spans. It answers `GET /trace/rule/{ruleID}` and `GET /trace/{id}` (rest-api.md §15).
 */
import { ByteBudget } from "../../core/byte-budget.ts";
import { rfc3339Nano, type Span, type SpanLink } from "./span.ts";

/** Spans kept per trace: a message fanned out without end (a huge unnest) cannot grow one trace unboundedly. */
export const MAX_SPANS_PER_TRACE = 1024;

interface StoredTrace {
  readonly ruleId: string;
  readonly spans: Span[];
  bytes: number;
}

/**
 * The estimated bytes a stored span holds: the object, its name and attributes (the `data` text,
 * cut at MAX_DATA in data.ts), its links. Strings count one byte per character (Latin-1 text).
 */
export function spanBytes(span: Span): number {
  let n = 160 + span.name.length;
  const a = span.attributes;
  for (const k in a) n += 56 + k.length + a[k]!.length;
  if (span.links !== null) n += 24 + 64 * span.links.length;
  return n;
}

/**
 * A span's links as plain ids. A link is the linked Span itself (a window's emission links the
 * rows it held), which would keep those spans, their data and their parents alive after their own
 * traces were evicted: outside of the budget.
 */
export function detachLinks(span: Span): void {
  const l = span.links;
  if (l === null || l.length === 0) return;
  const plain: SpanLink[] = new Array(l.length);
  for (let i = 0; i < l.length; i++) plain[i] = { traceId: l[i]!.traceId, spanId: l[i]!.spanId };
  (span as { links: readonly SpanLink[] | null }).links = plain;
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
   * Trace ids in arrival order, a ring of at most `capacity` from `head` (the oldest): the oldest
   * is evicted from here, not found by iterating the Map (whose first key sits behind every
   * deleted entry: O(deletions) in JSC).
   */
  private order: string[] = [];
  private head = 0;
  private count = 0;
  /** The bytes of every stored trace together (rows: traces). */
  readonly budget: ByteBudget;
  /** Spans refused because their trace was full. */
  dropped = 0;
  /** Traces evicted to keep within the byte budget (before `capacity` would have evicted them). */
  evictedForBytes = 0;

  constructor(
    readonly capacity: number,
    maxBytes = Infinity,
  ) {
    this.budget = new ByteBudget(maxBytes);
  }

  add(span: Span): void {
    detachLinks(span);
    const bytes = spanBytes(span);
    const t = this.traces.get(span.traceId);
    if (t) {
      if (t.spans.length >= MAX_SPANS_PER_TRACE) {
        this.dropped++;
        return;
      }
      t.spans.push(span);
      t.bytes += bytes;
      this.budget.charge(bytes, 0);
    } else {
      if (this.count === this.capacity) this.evictOldest();
      this.traces.set(span.traceId, { ruleId: span.ruleId, spans: [span], bytes });
      this.budget.charge(bytes);
      this.append(span.traceId);
    }
    // The newest trace stays even alone over the budget: one trace is bounded by MAX_SPANS_PER_TRACE × MAX_DATA.
    while (this.budget.over && this.count > 1) {
      this.evictOldest();
      this.evictedForBytes++;
    }
  }

  private append(id: string): void {
    const order = this.order;
    if (this.count === order.length && this.head !== 0) {
      // Full but below capacity after byte evictions: straighten the ring before it grows.
      this.order = order.slice(this.head).concat(order.slice(0, this.head));
      this.head = 0;
    }
    if (this.count < this.order.length) this.order[(this.head + this.count) % this.order.length] = id;
    else this.order.push(id);
    this.count++;
  }

  private evictOldest(): void {
    const id = this.order[this.head]!;
    const t = this.traces.get(id)!;
    this.traces.delete(id);
    this.budget.release(t.bytes);
    this.head = (this.head + 1) % this.order.length;
    this.count--;
  }

  get size(): number {
    return this.traces.size;
  }

  /** Trace ids of `ruleId`, most recent first; `limit` ≤ 0 means all. */
  traceIds(ruleId: string, limit: number): string[] {
    const out: string[] = [];
    const order = this.order;
    const n = order.length;
    for (let k = this.count - 1; k >= 0; k--) {
      const id = order[(this.head + k) % n]!;
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
