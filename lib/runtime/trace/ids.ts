/**
 * W3C Trace Context ids (https://www.w3.org/TR/trace-context/): 16-byte trace ids and 8-byte span
 * ids as lower-case hex, and the `traceparent` header an upstream hands over
 * (`00-<trace id>-<parent span id>-<flags>`).
 */

const HEX: string[] = [];
for (let i = 0; i < 256; i++) HEX.push(i.toString(16).padStart(2, "0"));

/** Ids are drawn from one random pool refilled in blocks: one crypto call per 512 spans, not per span. */
const pool = new Uint8Array(4096);
let used = pool.length;

function hex(bytes: number): string {
  if (used + bytes > pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  let s = "";
  let zero = true;
  for (let i = 0; i < bytes; i++) {
    const b = pool[used + i]!;
    if (b !== 0) zero = false;
    s += HEX[b]!;
  }
  used += bytes;
  // An all-zero id is invalid in W3C and OTLP: draw again (one chance in 2^64 or more).
  return zero ? hex(bytes) : s;
}

export function newTraceId(): string {
  return hex(16);
}

export function newSpanId(): string {
  return hex(8);
}

/** The span an incoming `traceparent` names: the trace to continue and the remote parent span. */
export interface RemoteParent {
  readonly traceId: string;
  readonly spanId: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * Parses a `traceparent` value; null when it is absent or malformed (version `ff`, all-zero ids,
 * a version-00 header with extra fields), as a W3C receiver then starts a new trace.
 */
export function parseTraceparent(v: unknown): RemoteParent | null {
  if (typeof v !== "string" || v.length > 512) return null;
  const m = TRACEPARENT.exec(v.trim().toLowerCase());
  if (!m) return null;
  const [, version, traceId, spanId, , rest] = m;
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  return { traceId: traceId!, spanId: spanId! };
}

/** The `traceparent` value that makes a downstream system continue `traceId` under `spanId` (sampled). */
export function formatTraceparent(traceId: string, spanId: string): string {
  return `00-${traceId}-${spanId}-01`;
}
