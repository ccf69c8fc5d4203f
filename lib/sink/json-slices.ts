/**
 * A whole-array JSON payload built a slice at a time: the rows of a window that a sink
 * without `sendSingle` sends as one array, or the outputs a batch writer joins, are encoded in
 * chunks across turns of the event loop and joined at the end. Byte-identical to one pass
 * (`encodeGoJson(rows)`, `PayloadEncoder.batch`): Go encodes an array as its elements' encodings
 * joined by commas, and the elements are encoded in the same order, so the first bad value (NaN)
 * throws the same RowError.
 */
import { encodeGoJson } from "../value/json-encode.ts";
import type { Value } from "../value/values.ts";
import type { Output } from "./transform.ts";
import { ROWS_PER_LOOK, type Turn } from "../core/turn.ts";

/** Elements encoded between two clock checks. */
const CHUNK = ROWS_PER_LOOK;

/** Whether `o` is an untemplated array worth encoding row by row (more than `min` rows). */
export function isBigArray(o: Output, min: number): boolean {
  return o.text === null && !o.pendingTemplate && Array.isArray(o.data) && o.data.length > min;
}

/** A payload built a slice at a time: `step` until true, then `text()`. */
export interface PayloadSlices {
  /** Works until done (true), the turn is spent or about `cap` rows are done (an unbounded turn: to the end). */
  step(turn: Turn, cap: number): boolean;
  text(): string;
  /** Time spent in `step` so far, ms. */
  readonly spentMs: number;
}

export class JsonSlices implements PayloadSlices {
  private readonly parts: string[] = [];
  /** The next unit to encode. */
  private u = 0;
  /** The unit being encoded row by row (an array of more than CHUNK rows), else null. */
  private rows: readonly Value[] | null = null;
  /** The next row of `rows`. */
  private r = 0;
  /** Time spent in `step` so far, ms (the helper node's process latency). */
  spentMs = 0;

  /**
   * `units`' encodings (template text as is), joined by commas inside `[…]` when `wrap` (a
   * batch); without `wrap` there is one unit and the payload is its encoding.
   */
  constructor(
    private readonly units: readonly Output[],
    private readonly wrap: boolean,
  ) {}

  /**
   * Encodes until done, until the turn is spent or about `cap` elements (rows, units) are done;
   * true when done. Throws RowError.
   */
  step(turn: Turn, cap: number): boolean {
    const t0 = performance.now();
    try {
      return this.run(turn, cap);
    } finally {
      this.spentMs += performance.now() - t0;
    }
  }

  private run(turn: Turn, cap: number): boolean {
    const units = this.units;
    const parts = this.parts;
    let work = 0;
    let total = 0;
    while (this.u < units.length) {
      const rows = this.rows;
      if (rows !== null) {
        const n = rows.length;
        let i = this.r;
        const end = Math.min(n, i + CHUNK);
        let s = i === 0 ? "[" : "";
        for (; i < end; i++) s += (i ? "," : "") + encodeGoJson(rows[i]!);
        if (i === n) {
          s += "]";
          this.rows = null;
          this.u++;
        }
        this.r = i;
        parts.push(s);
        work += CHUNK;
      } else {
        const o = units[this.u]!;
        const sep = this.wrap && this.u > 0 ? "," : "";
        if (isBigArray(o, CHUNK)) {
          if (sep) parts.push(sep);
          this.rows = o.data as Value[];
          this.r = 0;
          continue;
        }
        parts.push(sep + (o.text ?? encodeGoJson(o.data)));
        this.u++;
        work++;
      }
      if (work >= CHUNK) {
        total += work;
        work = 0;
        if (turn.over(total, cap)) break;
      }
    }
    return this.u === units.length;
  }

  /** The payload, once `step` returned true. */
  text(): string {
    const body = this.parts.join("");
    return this.wrap ? "[" + body + "]" : body;
  }
}
