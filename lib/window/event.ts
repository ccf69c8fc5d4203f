/**
 * Event-time windows, buffered (windows §6.3): each watermark closes every window that ends at or
 * before it (event-op.ts), scanning the held rows exactly as processing time does (§3.4, δ = 0).
 */
import type { Evaluator } from "../expr/compile.ts";
import type { Tuple } from "../expr/row.ts";
import type { WindowSpec } from "../plan/window-spec.ts";
import { alignedEnd } from "./align.ts";
import type { HitState } from "../expr/hits.ts";
import { triggers } from "./condition.ts";
import { unitMs } from "./tumbling.ts";
import { EventWindowOp } from "./event-op.ts";
import type { WindowEnv } from "./window-op.ts";

/** TUMBLINGWINDOW / HOPPINGWINDOW: ends on an aligned grid from the first row's timestamp. */
export class EventGridWindowOp extends EventWindowOp {
  private nextEnd: number | undefined;
  private readonly length: number;
  private readonly step: number;
  private readonly hopping: boolean;
  private readonly k: number;
  private readonly spec: WindowSpec;

  constructor(name: string, env: WindowEnv, spec: WindowSpec) {
    super(name, env, false);
    this.spec = spec;
    this.hopping = spec.type === "hopping";
    this.length = spec.length;
    this.step = this.hopping ? spec.interval : spec.length;
    this.k = this.step / unitMs(spec);
  }

  protected fire(wm: number): void {
    let end = this.nextEnd;
    if (end === undefined) {
      const first = this.rows[0];
      if (!first || first.ts > wm) return;
      end = alignedEnd(first.ts, this.k, this.spec.unit!, this.zone);
    }
    for (; end <= wm; end += this.step) {
      if (this.hopping) this.scanHopping(end);
      else this.scanTumbling(end);
    }
    this.nextEnd = end;
  }

  protected ownState(): unknown {
    return this.nextEnd ?? null;
  }

  protected loadOwn(s: unknown): void {
    this.nextEnd = (s as number | null) ?? undefined;
  }

  private scanTumbling(end: number): void {
    const b = this.rows;
    let i = 0;
    while (i < b.length && b[i]!.ts < end) i++;
    const inside = b.slice(0, i);
    this.rows = i ? b.slice(i) : b;
    let start = this.previous;
    if (start <= 0) start = end - this.length;
    this.previous = end;
    this.emitWindow(inside, { start, end, trigger: end });
  }

  private scanHopping(end: number): void {
    const b = this.rows;
    const left = end - this.length;
    let i = 0;
    while (i < b.length && b[i]!.ts < left) i++;
    let j = i;
    while (j < b.length && b[j]!.ts < end) j++;
    const inside = b.slice(i, j);
    // [quirk] with no row inside, the whole buffer is cleared, later rows included.
    this.rows = inside.length ? b.slice(i) : [];
    let start = this.previous - this.step;
    if (start <= 0) start = end - this.length;
    this.previous = end;
    this.emitWindow(inside, { start, end, trigger: end });
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
    if (i) this.rows = b.slice(i);
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
    if (i) this.rows = b.slice(i);
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
      this.rows = b.slice(i);
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
