/**
 * The one byte budget for what floe holds in memory on a user's behalf (THREAT-MODEL.md, "Memory"):
 * a window's buffered rows, the trace store, trial-run streams, memory tables. A holder charges
 * what it takes in and releases what it lets go; what does not fit is refused (and counted) or,
 * for a store that keeps the newest, makes it evict its oldest until it fits.
 *
 * Sizes are estimates (`estimateBytes`): bounded work per value, never an encoding, so a holder
 * can size a row once when it takes it in, on the message path.
 */
import type { Value } from "../value/values.ts";

export class ByteBudget {
  /** What is held now. */
  rows = 0;
  bytes = 0;
  /** Rows refused: `take` returned false. */
  droppedRows = 0;

  /** `maxBytes`/`maxRows` ≤ 0 or Infinity: no bound of that kind. */
  constructor(
    readonly maxBytes: number,
    readonly maxRows: number = Infinity,
  ) {
    if (!(maxBytes > 0)) this.maxBytes = Infinity;
    if (!(maxRows > 0)) this.maxRows = Infinity;
  }

  /** Charges `bytes` (and `rows`) when they fit; otherwise counts them as dropped and returns false. */
  take(bytes: number, rows = 1): boolean {
    if (this.bytes + bytes > this.maxBytes || this.rows + rows > this.maxRows) {
      this.droppedRows += rows;
      return false;
    }
    this.bytes += bytes;
    this.rows += rows;
    return true;
  }

  /** Charges unconditionally: an evicting holder then lets go of its oldest while `over`. */
  charge(bytes: number, rows = 1): void {
    this.bytes += bytes;
    this.rows += rows;
  }

  release(bytes: number, rows = 1): void {
    this.bytes -= bytes;
    this.rows -= rows;
    if (this.rows <= 0) {
      // Estimates re-derived after a restore may not sum back exactly: an empty holder is empty.
      this.rows = 0;
      this.bytes = 0;
    }
  }

  get over(): boolean {
    return this.bytes > this.maxBytes || this.rows > this.maxRows;
  }

  /** Which limit refused `rows` more, for error texts: "rows" or "bytes". */
  limitHit(rows = 1): "rows" | "bytes" {
    return this.rows + rows > this.maxRows ? "rows" : "bytes";
  }
}

/** Elements of an array sized one by one; past it, a sample of SAMPLE spread over the array stands for the rest. */
const EXACT_ITEMS = 16;
const SAMPLE = 8;
/** Levels sized exactly; deeper values count as DEEP bytes each (a deep value is costly to walk, not to hold). */
const MAX_DEPTH = 6;
const DEEP = 64;

/**
 * The estimated heap bytes of a decoded value: engine object and string headers plus contents.
 * The work is bounded: big arrays are sampled, nesting past MAX_DEPTH is not walked.
 */
export function estimateBytes(v: Value | unknown, depth = 0): number {
  switch (typeof v) {
    case "string":
      return 24 + (v as string).length;
    case "number":
    case "boolean":
    case "undefined":
      return 8;
    case "bigint":
      return 32;
    case "object":
      break;
    default:
      return 16;
  }
  if (v === null) return 8;
  if (depth >= MAX_DEPTH) return DEEP;
  if (ArrayBuffer.isView(v)) return 64 + v.byteLength;
  if (Array.isArray(v)) {
    const n = v.length;
    let sum = 24 + 8 * n;
    if (n <= EXACT_ITEMS) {
      for (let i = 0; i < n; i++) sum += estimateBytes(v[i], depth + 1);
      return sum;
    }
    let sampled = 0;
    const step = n / SAMPLE;
    for (let k = 0; k < SAMPLE; k++) sampled += estimateBytes(v[Math.floor(k * step)], depth + 1);
    return sum + Math.ceil((sampled / SAMPLE) * n);
  }
  const o = v as Record<string, unknown>;
  let sum = 32;
  let keys = 0;
  for (const k in o) {
    const x = o[k];
    // Strings and numbers inline: a row's fields are mostly these, and this runs once per row held.
    sum += typeof x === "string" ? 40 + x.length : typeof x === "object" && x !== null ? 16 + estimateBytes(x, depth + 1) : 24;
    // Property names of rows of one shape are shared; a row with many keys holds its own table.
    if (++keys > 64) sum += k.length;
  }
  return sum;
}
