/**
 * Event-time windows (windows §6.3): each watermark closes every window that ends at or before it,
 * scanning the held rows exactly as processing time does (§3.4, δ = 0). The grid windows take
 * either holder; sliding and session windows here are the buffered ones (inc-event-session.ts: the
 * incremental session).
 */
import type { Evaluator } from "../../expr/compile.ts";
import type { Tuple } from "../../expr/row.ts";
import type { IncSpec, WindowSpec } from "../../plan/window-spec.ts";
import { Watermark } from "../../core/item.ts";
import { alignedEnd } from "./align.ts";
import type { HitState } from "../../expr/hits.ts";
import { triggers } from "./condition.ts";
import { unitMs } from "./tumbling.ts";
import { EventWindowOp } from "./event-op.ts";
import type { GridHolder } from "./holder.ts";
import { RowGrid } from "./rows.ts";
import { GridTables } from "./tables.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

/**
 * TUMBLINGWINDOW / HOPPINGWINDOW: ends on an aligned grid from the first row's timestamp; each
 * watermark fires the windows ending at or before it. Not an EventWindowOp: what it holds is a
 * holder, the released rows (RowGrid) or accumulator tables (GridTables, windows §9).
 */
export class EventGridWindowOp extends WindowOp {
  private readonly holder: GridHolder;
  /** Previous trigger time P; the first row's timestamp until the first window closes. */
  private previous = NaN;
  private nextEnd: number | undefined;
  private readonly length: number;
  private readonly step: number;
  private readonly hopping: boolean;
  private readonly k: number;
  private readonly spec: WindowSpec;
  private readonly closeMarks: boolean;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec | undefined) {
    super(name, env, true, inc === undefined);
    this.spec = spec;
    this.closeMarks = env.closeMarks === true;
    this.hopping = spec.type === "hopping";
    this.length = spec.length;
    this.step = this.hopping ? spec.interval : spec.length;
    this.k = this.step / unitMs(spec);
    this.holder = inc ? new GridTables(inc, this.hopping, this.step, this.length) : new RowGrid(this.rowCap);
  }

  protected onRow(t: Tuple): void {
    if (Number.isNaN(this.previous)) this.previous = t.ts;
    this.holder.add(t);
  }

  protected override onWatermark(w: Watermark): void {
    const wm = w.ts;
    let end = this.nextEnd;
    if (end === undefined) {
      const first = this.holder.opening(wm);
      if (first === undefined) return;
      end = alignedEnd(first, this.k, this.spec.unit!, this.zone);
    }
    for (; end <= wm; end += this.step) {
      let start = this.hopping ? this.previous - this.step : this.previous;
      if (start <= 0) start = end - this.length;
      this.previous = end;
      const range = { start, end, trigger: end };
      const c = this.hopping ? this.holder.takeHop(end - this.length, end, range) : this.holder.takeBefore(end, range);
      if (c) this.emit(c);
      if (this.closeMarks) this.next.push(new Watermark(end));
    }
    this.nextEnd = end;
    this.holder.settle(end);
  }

  flushTime(): undefined {
    return undefined;
  }

  override snapshot(): unknown {
    return { ...this.holder.save(), previous: this.previous, own: this.holder.own(this.nextEnd) };
  }

  override restore(s: unknown): void {
    const st = s as { previous: number; own: unknown };
    this.holder.load(st);
    this.previous = st.previous;
    this.nextEnd = this.holder.loadOwn(st.own);
  }
}

/**
 * SLIDINGWINDOW: a row satisfying the trigger when it reaches the window becomes a pending
 * trigger t; once the watermark reaches t the window [t−L, t] is emitted, or with a delay the
 * window [t−L, t+D) once a later watermark reaches t+D — without a window range [quirk].
 */
export class EventSlidingWindowOp extends EventWindowOp {
  private readonly length: number;
  private readonly delay: number;
  private readonly trigger: Evaluator | undefined;
  private readonly hits: HitState | undefined;
  private pending: number[] = [];
  private delayed: number[] = [];

  constructor(name: string, env: WindowEnv, spec: WindowSpec, trigger: Evaluator | undefined, hits: HitState | undefined) {
    super(name, env, false);
    this.length = spec.length;
    this.delay = spec.interval;
    this.trigger = trigger;
    this.hits = hits;
  }

  protected override arrived(t: Tuple): void {
    if (triggers(this.trigger, this.hits, t)) {
      this.pending.push(t.ts);
      return;
    }
    // Garbage-collect as processing time does, but never a row a pending trigger still needs.
    let before = t.ts - this.length - this.delay;
    const need = this.pending.length ? this.pending[0]! : this.delayed.length ? this.delayed[0]! - this.delay : Infinity;
    if (need - this.length - 1 < before) before = need - this.length - 1;
    const b = this.rows;
    let i = 0;
    while (i < b.length && b[i]!.ts <= before) i++;
    if (i) this.drop(i);
  }

  protected fire(wm: number): void {
    while (this.delayed.length && this.delayed[0]! <= wm) {
      const due = this.delayed.shift()!;
      this.emitWindow(this.scan(due - this.delay - this.length, due, false), null);
    }
    while (this.pending.length && this.pending[0]! <= wm) {
      const t = this.pending.shift()!;
      if (this.delay > 0) {
        this.delayed.push(t + this.delay);
        continue;
      }
      const start = t - this.length;
      this.emitWindow(this.scan(start, t, true), { start, end: t, trigger: t });
    }
  }

  protected ownState(): unknown {
    return { pending: this.pending, delayed: this.delayed, hits: this.hits ? [this.hits.count, this.hits.time] : null };
  }

  protected loadOwn(s: unknown): void {
    const st = s as { pending: number[]; delayed: number[]; hits: [number, number] | null };
    this.pending = st.pending;
    this.delayed = st.delayed;
    if (this.hits && st.hits) [this.hits.count, this.hits.time] = st.hits;
  }

  private scan(left: number, end: number, closed: boolean): Tuple[] {
    const b = this.rows;
    let i = 0;
    while (i < b.length && b[i]!.ts < left) i++;
    if (i) this.drop(i);
    const out: Tuple[] = [];
    for (const t of this.rows) {
      if (closed ? t.ts > end : t.ts >= end) break;
      out.push(t);
    }
    return out;
  }
}

/**
 * SESSIONWINDOW: on every watermark the held rows are cut into sessions by `nextSessionEnd`
 * (a gap longer than the timeout, or an aligned max-duration tick), each emitted once it ends.
 */
export class EventSessionWindowOp extends EventWindowOp {
  private readonly maxDuration: number;
  private readonly timeout: number;
  private readonly k: number;
  private readonly spec: WindowSpec;
  private endedByTick = false;

  constructor(name: string, env: WindowEnv, spec: WindowSpec) {
    super(name, env, false);
    this.spec = spec;
    this.maxDuration = spec.length;
    this.timeout = spec.interval;
    this.k = spec.length / unitMs(spec);
  }

  protected ownState(): unknown {
    return this.endedByTick;
  }

  protected loadOwn(s: unknown): void {
    this.endedByTick = s as boolean;
  }

  protected fire(wm: number): void {
    for (;;) {
      const b = this.rows;
      const cut = nextSessionEnd(b, wm, this.maxDuration, this.timeout, (et) => alignedEnd(et, this.k, this.spec.unit!, this.zone));
      if (cut === undefined || cut.end > wm) return;
      if (!this.endedByTick) this.previous = b[0]!.ts;
      let i = 0;
      while (i < b.length && b[i]!.ts < cut.end) i++;
      const start = this.previous;
      this.previous = cut.end;
      this.drop(i);
      this.endedByTick = cut.ticked;
      this.emitWindow(b.slice(0, i), { start, end: cut.end, trigger: cut.end });
    }
  }
}

/** Where the first session of `rows` (timestamp order) ends, if it has ended by watermark `wm` (§6.3). */
export function nextSessionEnd(
  rows: readonly { readonly ts: number }[],
  wm: number,
  maxDuration: number,
  timeout: number,
  align: (et: number) => number,
): { end: number; ticked: boolean } | undefined {
  if (!rows.length) return undefined;
  const et = rows[0]!.ts;
  let tick = align(et);
  let prev: number | undefined;
  for (const r of rows) {
    let end: number | undefined;
    let ticked = false;
    if (prev !== undefined && r.ts - prev > timeout) end = prev + timeout;
    if (r.ts > tick) {
      if (tick - maxDuration > et && tick < (end ?? Infinity)) {
        end = tick;
        ticked = true;
      }
      tick += maxDuration;
    }
    if (end !== undefined) return { end, ticked };
    prev = r.ts;
  }
  if (prev !== undefined && wm - prev > timeout) return { end: prev + timeout, ticked: false };
  return undefined;
}
