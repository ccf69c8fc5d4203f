/**
 * One span of a rule's trace (rest-api.md §15): a node's handling of one message (or of one
 * emission), with its timing, the data it saw and its place in the trace tree. Fixed shape; made
 * only while a rule is traced.
 */
import { newSpanId } from "./ids.ts";

/** A link to a span of another trace (a window emission links the rows it holds); a Span is one. */
export interface SpanLink {
  readonly traceId: string;
  readonly spanId: string;
}

export class Span {
  readonly name: string;
  readonly traceId: string;
  /** The span this one is a child of, in this process; null for a root. */
  readonly parent: Span | null;
  /** A root continuing an upstream trace (`traceparent`): the upstream span's id, else "". */
  readonly remoteParentId: string;
  readonly ruleId: string;
  /**
   * Drawn when first read (the store's tree, the exporter, a sink's `traceparent`): most stored
   * spans are evicted unread, so most never need one.
   */
  private id: string | null;
  /** Epoch milliseconds with sub-millisecond precision. */
  readonly start: number;
  end: number;
  readonly attributes: Record<string, string>;
  readonly links: readonly SpanLink[] | null;

  constructor(name: string, traceId: string, parent: Span | null, remoteParentId: string, ruleId: string, links: readonly SpanLink[] | null) {
    this.name = name;
    this.traceId = traceId;
    this.parent = parent;
    this.remoteParentId = remoteParentId;
    this.ruleId = ruleId;
    this.id = null;
    this.start = epochMs();
    this.end = 0;
    this.attributes = {};
    this.links = links;
  }

  get spanId(): string {
    return (this.id ??= newSpanId());
  }

  /** The parent's id ("" for a root that continues no upstream trace). */
  get parentSpanId(): string {
    return this.parent !== null ? this.parent.spanId : this.remoteParentId;
  }
}

/** Where finished spans go: the local store and/or the OTLP exporter (hub.ts). */
export interface SpanSink {
  record(span: Span): void;
}

/** Read once: `performance.timeOrigin` is a host getter, costlier than the clock read itself. */
const ORIGIN = performance.timeOrigin;

/** The wall clock with the monotonic clock's sub-millisecond resolution. */
export function epochMs(): number {
  return ORIGIN + performance.now();
}

/**
 * The sub-millisecond part of epoch ms in nanoseconds, at microsecond resolution: a double holding
 * epoch milliseconds keeps about three decimals, so finer digits would be noise.
 */
function subMsNanos(ms: number, whole: number): number {
  return Math.min(999, Math.round((ms - whole) * 1e3)) * 1000;
}

/** Epoch ms → nanoseconds as a decimal string (OTLP's `…UnixNano`, a uint64 JSON string). */
export function unixNano(ms: number): string {
  const whole = Math.floor(ms);
  return (BigInt(whole) * 1_000_000n + BigInt(subMsNanos(ms, whole))).toString();
}

/** Epoch ms → Go's RFC3339Nano in UTC (trailing zeros of the fraction trimmed, as Go prints time.Time). */
export function rfc3339Nano(ms: number): string {
  const whole = Math.floor(ms);
  const ns = subMsNanos(ms, whole);
  const iso = new Date(whole).toISOString(); // …T12:34:56.789Z
  const frac = (iso.slice(20, 23) + String(ns).padStart(6, "0")).replace(/0+$/, "");
  return iso.slice(0, 19) + (frac ? "." + frac : "") + "Z";
}
