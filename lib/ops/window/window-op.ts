/**
 * Common shape of the window operators (`<n>_window`): a clock, emission of collections. Each
 * subclass is one *when* (a window kind in processing or event time); *what* it holds between
 * firings — the rows, or accumulators (windows §9) — is a holder it is given (holder.ts).
 */
import type { Tuple, WindowRange } from "../../expr/row.ts";
import type { Zone } from "../../value/time.ts";
import { Collection, type Item, type Watermark } from "../../core/item.ts";
import { Operator, type OpEnv } from "../../core/operator.ts";
import type { ByteBudget } from "../../core/byte-budget.ts";
import { WallClock, type Clock } from "./clock.ts";
import { HeldRows } from "./held-rows.ts";

export interface WindowEnv extends OpEnv {
  readonly clock: Clock;
  readonly zone: Zone;
  /** The rule's cap on the rows its windows hold (held-rows.ts); none when undefined. */
  readonly windowBudget?: ByteBudget;
  /**
   * An event-time TUMBLINGWINDOW/HOPPINGWINDOW sends a Watermark of each window's end downstream
   * after the window's results (if any): the operators pass it on in order, behind rows still
   * spread across turns, so the sinks hear of the close after its rows — a two-stage rule's
   * partition tells the merge of a window it had no rows in.
   */
  readonly closeMarks?: boolean;
}

export abstract class WindowOp extends Operator {
  protected readonly clock: Clock;
  protected readonly zone: Zone;
  /** Event-time windows take rows in timestamp order and are driven by watermarks only. */
  protected readonly eventTime: boolean;
  /** A processing-time window on the wall clock (which needs the catch-up below). */
  private readonly wall: WallClock | undefined;
  /** The rows this window holds, against the rule's cap; null when it holds accumulators only (or no cap is set). */
  protected readonly rowCap: HeldRows | null;
  /** `holdsRows`: the window keeps its rows until it fires (the buffered evaluator), not accumulators. */
  constructor(name: string, env: WindowEnv, eventTime = false, holdsRows = true) {
    super(name, env, "");
    this.clock = env.clock;
    this.zone = env.zone;
    this.eventTime = eventTime;
    this.wall = !eventTime && env.clock instanceof WallClock ? env.clock : undefined;
    this.rowCap = holdsRows && env.windowBudget !== undefined ? new HeldRows(env.windowBudget, this.metrics) : null;
  }

  protected process(item: Item): void {
    if ((item as Tuple).data === undefined) return;
    this.metrics.messagesProcessed++;
    const t = item as Tuple;
    // Timers due by the row's time fire first: what they emit makes room for it.
    this.catchUp(t.ts);
    if (this.rowCap !== null && !this.rowCap.admit(t)) {
      this.overCap(t);
      return;
    }
    this.onRow(t);
  }

  /**
   * Fires the timers due at or before `ts`, a row's time, before the row is taken in (windows
   * §3.1), even when a wall clock's timeout is late: a row never lands in a window that should
   * already have closed. (Replay advances its virtual clock before each record.) A traced rule
   * calls it before the row's span opens, so what these timers emit is traced as the timer's.
   */
  catchUp(ts: number): void {
    const wall = this.wall;
    if (wall === undefined) return;
    const due = wall.nextTimer();
    if (due !== undefined && due <= ts) wall.advance(ts);
  }

  protected abstract onRow(t: Tuple): void;

  /**
   * A row the rule's cap refused: not held, but a window driven by its rows' conditions still
   * reads them (a state window's end, a sliding window's trigger), or it would never fire again.
   */
  protected overCap(_t: Tuple): void {}

  /** Watermarks end at the window; event-time windows override this to trigger. */
  protected override onWatermark(_w: Watermark): void {}

  protected emitWindow(rows: Tuple[], range: WindowRange | null): void {
    this.emit(new Collection(rows, range));
  }

  /**
   * The time by which every row held now would have been emitted (for `--on-eof flush`), or
   * undefined when nothing is pending on the clock.
   */
  abstract flushTime(): number | undefined;

  /** Cancels the window's timers (ticks, timeouts, delayed triggers): nothing fires after the end. */
  override close(): void {}
}
