/**
 * What a rule's buffered windows hold, against the rule's row and byte cap (rule options
 * `windowMaxRows`, `windowMaxBytes`; core/byte-budget.ts). Each row is sized once, when a window
 * takes it in; a row over the cap is dropped, counted on the window node (`records_lost_total`,
 * `exceptions_total`, `last_exception` naming the cap) and the rule keeps running: the window
 * emits what it holds when it fires, and takes rows again as soon as it has room.
 * eKuiper has no such cap: `COUNTWINDOW(100000000)` grew until the process ran out of memory.
 */
import { estimateBytes, type ByteBudget } from "../core/byte-budget.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import type { Tuple } from "../expr/row.ts";

/** A tuple's own fields, besides its data. */
const TUPLE_BYTES = 80;

export class HeldRows {
  constructor(
    readonly budget: ByteBudget,
    private readonly node: NodeMetrics,
  ) {}

  /** Sizes `t` and charges it; false (counted, reported) when the rule's windows are at their cap. */
  admit(t: Tuple): boolean {
    const size = TUPLE_BYTES + estimateBytes(t.data);
    if (this.budget.take(size)) {
      t.size = size;
      return true;
    }
    const n = this.node;
    n.recordsLost = n.recordsLost < 0 ? 1 : n.recordsLost + 1;
    const b = this.budget;
    const cap = b.limitHit(size) === "rows" ? `${b.maxRows} rows (rule option windowMaxRows)` : `${b.maxBytes} bytes (rule option windowMaxBytes)`;
    n.exception(`the rule's windows hold their cap of ${cap}: row dropped`, Date.now());
    return false;
  }

  /** Lets go of `rows[from, to)`. */
  release(rows: readonly Tuple[], from = 0, to = rows.length): void {
    let bytes = 0;
    for (let i = from; i < to; i++) bytes += rows[i]!.size;
    if (to > from) this.budget.release(bytes, to - from);
  }

  releaseOne(t: Tuple): void {
    this.budget.release(t.size);
  }

  /** Charges rows restored from a checkpoint (sized now: a checkpoint keeps no sizes), over the cap or not. */
  restored(rows: readonly Tuple[]): void {
    for (const t of rows) {
      t.size = TUPLE_BYTES + estimateBytes(t.data);
      this.budget.charge(t.size);
    }
  }
}
