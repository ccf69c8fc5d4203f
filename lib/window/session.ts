/**
 * SESSIONWINDOW(unit, M, O) (windows §4.4): a session closes after O without rows, and is cut at
 * aligned ticks every M once it has lasted M.
 */
import type { Tuple } from "../expr/row.ts";
import type { WindowSpec } from "../plan/window-spec.ts";
import type { Timer } from "./clock.ts";
import { Ticker } from "./ticker.ts";
import { unitMs } from "./tumbling.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

export class SessionWindowOp extends WindowOp {
  private buffer: Tuple[] = [];
  private start = 0;
  private timeoutTimer: Timer | undefined;
  private timeoutAt = 0;
  private readonly maxDuration: number;
  private readonly timeout: number;
  private readonly ticker: Ticker;

  constructor(name: string, env: WindowEnv, spec: WindowSpec) {
    super(name, env);
    this.maxDuration = spec.length;
    this.timeout = spec.interval;
    this.ticker = new Ticker(this.clock, this.zone, spec.length / unitMs(spec), spec.unit!, spec.length, (t) => this.tick(t));
    this.ticker.start();
  }

  protected onRow(t: Tuple): void {
    this.buffer.push(t);
    if (!this.timeoutTimer) this.start = t.ts;
    // Every row restarts the timeout: the pending timer moves (windows §4.4).
    this.timeoutAt = t.ts + this.timeout;
    this.timeoutTimer = this.timeoutTimer ? this.clock.reschedule(this.timeoutTimer, this.timeoutAt) : this.clock.schedule(this.timeoutAt, this.onTimeout);
  }

  private readonly onTimeout = (): void => {
    if (!this.buffer.length) return; // [quirk] stays "active": the next row keeps the start
    const now = this.clock.now();
    const rows = this.buffer.filter((r) => r.ts < now);
    this.buffer = this.buffer.filter((r) => r.ts >= now);
    this.timeoutTimer = undefined;
    this.emitWindow(rows, { start: this.start, end: now, trigger: now });
  };

  private tick(T: number): void {
    if (!this.buffer.length || T - this.buffer[0]!.ts < this.maxDuration) return;
    const rows = this.buffer.filter((r) => r.ts < T);
    this.buffer = this.buffer.filter((r) => r.ts >= T);
    const start = this.start;
    this.start = T;
    this.emitWindow(rows, { start, end: T, trigger: T });
  }

  flushTime(): number | undefined {
    return this.buffer.length ? this.timeoutAt : undefined;
  }

  override snapshot(): unknown {
    const timeout = this.timeoutTimer ? this.timeoutAt : null;
    return { rows: this.buffer, start: this.start, timeout, tick: this.ticker.snapshot() };
  }

  override restore(s: unknown): void {
    const st = s as { rows: Tuple[]; start: number; timeout: number | null; tick: unknown };
    this.buffer = st.rows;
    this.start = st.start;
    if (st.timeout !== null) {
      this.timeoutAt = st.timeout;
      this.timeoutTimer = this.clock.schedule(st.timeout, this.onTimeout);
    }
    this.ticker.restore(st.tick);
  }
}
