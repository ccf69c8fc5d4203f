/**
 * The event-time trigger (windows §6.3), shared by both evaluators: the watermark operator
 * releases rows in timestamp order and then sends the watermark; each watermark fires every
 * window that ends at or before it. The previous trigger time P starts at the first row's
 * timestamp. Rows still held at end of input are never released (windows §6.2).
 */
import type { Tuple } from "../../expr/row.ts";
import type { Watermark } from "../../core/item.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

export abstract class EventWindowOp extends WindowOp {
  /**
   * Released rows in timestamp order: all not yet scanned away (buffered, checkpointed as
   * `rows`), or those released since the last watermark (incremental, as `pending`).
   */
  protected rows: Tuple[] = [];
  /** Previous trigger time P; the first row's timestamp until the first window closes. */
  protected previous = NaN;
  private readonly incremental: boolean;

  /** `incremental`: the rows are folded at each watermark and dropped after it. */
  constructor(name: string, env: WindowEnv, incremental: boolean) {
    super(name, env, true);
    this.incremental = incremental;
  }

  protected onRow(t: Tuple): void {
    if (Number.isNaN(this.previous)) this.previous = t.ts;
    this.rows.push(t);
    this.arrived(t);
  }

  protected arrived(_t: Tuple): void {}

  /** A row over the rule's cap is not held, but its trigger (a sliding window's) still counts. */
  protected override overCap(t: Tuple): void {
    if (Number.isNaN(this.previous)) this.previous = t.ts;
    this.arrived(t);
  }

  protected override onWatermark(w: Watermark): void {
    this.fire(w.ts);
    if (this.incremental) {
      this.rowCap?.release(this.rows);
      this.rows.length = 0;
    }
  }

  /** The oldest `n` rows leave the buffer. */
  protected drop(n: number): void {
    this.rowCap?.release(this.rows, 0, n);
    this.rows = this.rows.slice(n);
  }

  protected abstract fire(wm: number): void;

  flushTime(): undefined {
    return undefined;
  }

  override snapshot(): unknown {
    if (this.incremental) return { pending: this.rows, previous: this.previous, own: this.ownState() };
    return { rows: this.rows, previous: this.previous, own: this.ownState() };
  }

  override restore(s: unknown): void {
    const st = s as { rows?: Tuple[]; pending?: Tuple[]; previous: number; own: unknown };
    this.rows = (this.incremental ? st.pending : st.rows)!;
    this.rowCap?.restored(this.rows);
    this.previous = st.previous;
    this.loadOwn(st.own);
  }

  /** The window kind's own state (next trigger times, pending triggers, open tables), and its inverse. */
  protected abstract ownState(): unknown;
  protected abstract loadOwn(s: unknown): void;
}
