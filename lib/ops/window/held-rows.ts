/**
 * What a rule's buffered windows hold, against the rule's row and byte cap (rule options
 * `windowMaxRows`, `windowMaxBytes`; core/byte-budget.ts). Each row is sized once, when a window
 * takes it in, by sampling: the first WARMUP rows and then one in SAMPLE_EVERY at random are
 * estimated (`estimateBytes`), the others are charged the running mean of the sampled ones (the
 * cost: bench/window-ingest.ts --evaluator buffered). A row over the cap is dropped, counted on
 * the window node (`records_lost_total`, `exceptions_total`, `last_exception` naming the cap) and
 * the rule keeps running: the window emits what it holds when it fires, and takes rows again as
 * soon as it has room.
 * eKuiper has no such cap: `COUNTWINDOW(100000000)` grew until the process ran out of memory.
 */
import { estimateBytes, type ByteBudget } from "../../core/byte-budget.ts";
import type { NodeMetrics } from "../../core/metrics.ts";
import type { Tuple } from "../../expr/row.ts";

/** A tuple's own fields, besides its data. */
const TUPLE_BYTES = 80;
/** Rows estimated before sampling starts, and the sampling rate after (a power of two). */
const WARMUP = 16;
const SAMPLE_EVERY = 32;

export class HeldRows {
  /** The running mean of the sampled sizes (an exponential one: weight 1/2 up, 1/8 down). */
  private mean = 0;
  private sampled = 0;
  /** xorshift32: which rows are sampled cannot be predicted from the input. */
  private rng = (Math.random() * 0xffffffff) | 1;

  constructor(
    readonly budget: ByteBudget,
    private readonly node: NodeMetrics,
    /** Who holds the rows, for the error text. */
    private readonly holder = "the rule's windows",
  ) {}

  private sizeOf(t: Tuple): number {
    let x = this.rng;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.rng = x;
    if (this.sampled >= WARMUP && (x & (SAMPLE_EVERY - 1)) !== 0) return this.mean;
    const size = TUPLE_BYTES + estimateBytes(t.data);
    // Up fast, down slowly: rows growing bigger (an attack) reach the byte cap after a few samples.
    if (this.sampled < WARMUP) this.mean = (this.mean * this.sampled + size) / (this.sampled + 1);
    else this.mean += (size - this.mean) / (size > this.mean ? 2 : 8);
    this.sampled++;
    return size;
  }

  /** Sizes `t` and charges it; false (counted, reported) when the rule's windows are at their cap. */
  admit(t: Tuple): boolean {
    const size = this.sizeOf(t);
    if (this.budget.take(size)) {
      t.size = size;
      return true;
    }
    const n = this.node;
    n.recordsLost = n.recordsLost < 0 ? 1 : n.recordsLost + 1;
    const b = this.budget;
    const cap = b.limitHit() === "rows" ? `${b.maxRows} rows (rule option windowMaxRows)` : `${b.maxBytes} bytes (rule option windowMaxBytes)`;
    n.exception(`${this.holder} hold their cap of ${cap}: row dropped`, Date.now());
    return false;
  }

  /** Lets go of `rows[from, to)`. */
  release(rows: readonly Tuple[], from = 0, to = rows.length): void {
    let bytes = 0;
    for (let i = from; i < to; i++) bytes += rows[i]!.size;
    if (to > from) this.budget.release(bytes, to - from);
  }

  /** Lets go of one row. */
  releaseOne(t: Tuple): void {
    this.budget.release(t.size);
  }

  /** Lets go of `rows` rows of `bytes` together (summed by the caller in its own pass). */
  releaseBytes(bytes: number, rows: number): void {
    if (rows > 0) this.budget.release(bytes, rows);
  }

  /** Charges rows restored from a checkpoint (sized now: a checkpoint keeps no sizes), over the cap or not. */
  restored(rows: readonly Tuple[]): void {
    for (const t of rows) {
      t.size = TUPLE_BYTES + estimateBytes(t.data);
      this.budget.charge(t.size);
    }
  }
}
