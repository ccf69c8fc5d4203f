/**
 * SLIDINGWINDOW(unit, L[, D]) (windows §4.3): each triggering row emits the rows of the L before
 * it (closed range), or with a delay D the rows of [T−L, T+D) at T+D.
 */
import type { Evaluator } from "../../expr/compile.ts";
import type { HitState } from "../../expr/hits.ts";
import type { Tuple } from "../../expr/row.ts";
import type { WindowSpec } from "../../plan/window-spec.ts";
import type { Timer } from "./clock.ts";
import { triggers } from "./condition.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

export class SlidingWindowOp extends WindowOp {
  private buffer: Tuple[] = [];
  private readonly length: number;
  private readonly delay: number;
  private readonly trigger: Evaluator | undefined;
  private readonly hits: HitState | undefined;
  /** Delayed triggers waiting for their timer, with the trigger row's time. */
  private readonly pending = new Map<Timer, number>();
  private lastDue = 0;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, trigger: Evaluator | undefined, hits: HitState | undefined) {
    super(name, env);
    this.length = spec.length;
    this.delay = spec.interval;
    this.trigger = trigger;
    this.hits = hits;
  }

  protected onRow(t: Tuple): void {
    this.buffer.push(t);
    this.step(t);
  }

  /** A trigger over the cap still emits the rows held. */
  protected override overCap(t: Tuple): void {
    this.step(t);
  }

  private step(t: Tuple): void {
    const T = t.ts;
    if (!triggers(this.trigger, this.hits, t)) {
      this.gc(T - this.length - this.delay);
      return;
    }
    if (this.delay === 0) {
      this.scan(T - this.length, T, true, T);
      return;
    }
    this.delayed(T);
  }

  /** Schedules the window of a trigger at T, emitted at T + delay. */
  private delayed(T: number): void {
    const due = T + this.delay;
    this.lastDue = Math.max(this.lastDue, due);
    const timer = this.clock.schedule(due, () => {
      this.pending.delete(timer);
      this.scan(T - this.length, due, false, due);
    });
    this.pending.set(timer, T);
  }

  private gc(before: number): void {
    let i = 0;
    while (i < this.buffer.length && this.buffer[i]!.ts <= before) i++;
    if (i) this.drop(i);
  }

  private scan(left: number, end: number, closed: boolean, trigger: number): void {
    let i = 0;
    while (i < this.buffer.length && this.buffer[i]!.ts < left) i++;
    if (i) this.drop(i);
    const rows = this.buffer.filter((t) => (closed ? t.ts <= end : t.ts < end));
    this.emitWindow(rows, { start: left, end, trigger });
  }

  /** The oldest `n` rows leave the buffer. */
  private drop(n: number): void {
    this.rowCap?.release(this.buffer, 0, n);
    this.buffer = this.buffer.slice(n);
  }

  flushTime(): number | undefined {
    return this.pending.size ? this.lastDue : undefined;
  }

  override close(): void {
    for (const timer of this.pending.keys()) timer.cancel();
  }

  override snapshot(): unknown {
    return { rows: this.buffer, triggers: [...this.pending.values()], hits: this.hits ? [this.hits.count, this.hits.time] : null };
  }

  override restore(s: unknown): void {
    const st = s as { rows: Tuple[]; triggers: number[]; hits: [number, number] | null };
    this.buffer = st.rows;
    this.rowCap?.restored(st.rows);
    for (const T of st.triggers) this.delayed(T);
    if (this.hits && st.hits) [this.hits.count, this.hits.time] = st.hits;
  }
}
