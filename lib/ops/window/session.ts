/**
 * SESSIONWINDOW(unit, M, T) in processing time (windows §4.4): a session ends after a gap T, or
 * is cut at aligned ticks every M once it has lasted M.
 */
import type { Tuple } from "../../expr/row.ts";
import type { IncSpec, WindowSpec } from "../../plan/window-spec.ts";
import type { Timer } from "./clock.ts";
import type { PaneHolder } from "./holder.ts";
import { RowBuffer } from "./rows.ts";
import { TablePane } from "./tables.ts";
import { Ticker } from "./ticker.ts";
import { unitMs } from "./tumbling.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

export class SessionWindowOp extends WindowOp {
  private readonly holder: PaneHolder;
  private start = 0;
  private timeoutTimer: Timer | undefined;
  private timeoutAt = 0;
  private readonly maxDuration: number;
  private readonly timeout: number;
  private readonly ticker: Ticker;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec | undefined) {
    super(name, env, false, inc === undefined);
    this.holder = inc ? new TablePane(inc) : new RowBuffer(this.rowCap);
    this.maxDuration = spec.length;
    this.timeout = spec.interval;
    this.ticker = new Ticker(this.clock, this.zone, spec.length / unitMs(spec), spec.unit!, spec.length, (t) => this.tick(t));
    this.ticker.start();
  }

  protected onRow(t: Tuple): void {
    this.holder.add(t);
    if (!this.timeoutTimer) this.start = t.ts;
    // Every row restarts the timeout: the pending timer moves (windows §4.4).
    this.timeoutAt = t.ts + this.timeout;
    this.timeoutTimer = this.timeoutTimer ? this.clock.reschedule(this.timeoutTimer, this.timeoutAt) : this.clock.schedule(this.timeoutAt, this.onTimeout);
  }

  private readonly onTimeout = (): void => {
    if (!this.holder.held()) return; // [quirk] stays "active": the next row keeps the start
    const now = this.clock.now();
    const c = this.holder.takeBefore(now, { start: this.start, end: now, trigger: now });
    this.timeoutTimer = undefined;
    if (c) this.emit(c);
  };

  private tick(T: number): void {
    if (!this.holder.held() || T - this.holder.firstTs() < this.maxDuration) return;
    const start = this.start;
    this.start = T;
    const c = this.holder.takeBefore(T, { start, end: T, trigger: T });
    if (c) this.emit(c);
  }

  flushTime(): number | undefined {
    return this.holder.held() ? this.timeoutAt : undefined;
  }

  override close(): void {
    this.ticker.stop();
    this.timeoutTimer?.cancel();
  }

  override snapshot(): unknown {
    const timeout = this.timeoutTimer ? this.timeoutAt : null;
    return { ...this.holder.save(), start: this.start, timeout, tick: this.ticker.snapshot() };
  }

  override restore(s: unknown): void {
    const st = s as { start: number; timeout: number | null; tick: unknown };
    this.holder.load(st);
    this.start = st.start;
    if (st.timeout !== null) {
      this.timeoutAt = st.timeout;
      this.timeoutTimer = this.clock.schedule(st.timeout, this.onTimeout);
    }
    this.ticker.restore(st.tick);
  }
}
