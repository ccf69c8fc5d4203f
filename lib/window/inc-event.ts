/**
 * Incremental windows in event time (windows §6.3 semantics, §9 evaluation). The rows released
 * since the last watermark wait in `rows` (never more than one release, event-op.ts) so that each
 * watermark can replay the buffered operator's decisions in order — including the hopping quirk
 * that drops released rows after an empty window.
 */
import type { Tuple, WindowRange } from "../expr/row.ts";
import type { IncSpec, WindowSpec } from "../plan/window-spec.ts";
import { alignedEnd } from "./align.ts";
import { EventWindowOp } from "./event-op.ts";
import { GroupTable, RowEval } from "./inc-groups.ts";
import { tableEmission } from "./tables.ts";
import { unitMs } from "./tumbling.ts";
import type { WindowEnv } from "./window-op.ts";

/** Common part of the incremental event-time windows: the accumulator tables of §9. */
abstract class IncEventWindowOp extends EventWindowOp {
  protected readonly ev: RowEval;
  protected readonly k: number;

  constructor(
    name: string,
    env: WindowEnv,
    protected readonly spec: WindowSpec,
    protected readonly inc: IncSpec,
    k: number,
  ) {
    super(name, env, true);
    this.ev = new RowEval(inc);
    this.k = k;
  }

  protected align(ts: number): number {
    return alignedEnd(ts, this.k, this.spec.unit!, this.zone);
  }

  protected table(): GroupTable {
    return new GroupTable(this.inc);
  }

  protected emitTable(table: GroupTable, range: WindowRange): void {
    const c = tableEmission(this.inc, table, range);
    if (c) this.emit(c);
  }
}

interface GridWindow {
  readonly end: number;
  readonly table: GroupTable;
}

/**
 * TUMBLINGWINDOW / HOPPINGWINDOW: window ends on the grid alignedEnd(first ts) + j·step; a row
 * joins every window [end − L, end) holding it (tumbling windows have no left edge: a row joins
 * the first window ending after it).
 */
export class IncEventGridWindowOp extends IncEventWindowOp {
  /** Windows not yet emitted, by increasing end. */
  private readonly open: GridWindow[] = [];
  private nextEnd = NaN;
  private readonly length: number;
  private readonly step: number;
  private readonly hopping: boolean;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec) {
    const hopping = spec.type === "hopping";
    const step = hopping ? spec.interval : spec.length;
    super(name, env, spec, inc, step / unitMs(spec));
    this.hopping = hopping;
    this.length = spec.length;
    this.step = step;
  }

  protected ownState(): unknown {
    return { open: this.open.map((w) => [w.end, w.table.snapshot()]), nextEnd: this.nextEnd };
  }

  protected loadOwn(s: unknown): void {
    const st = s as { open: [number, unknown][]; nextEnd: number };
    for (const [end, t] of st.open) this.open.push({ end, table: GroupTable.restore(t, this.inc) });
    this.nextEnd = st.nextEnd;
  }

  protected fire(wm: number): void {
    const pending = this.rows;
    let p = 0;
    if (Number.isNaN(this.nextEnd)) {
      if (pending.length === 0) return;
      this.nextEnd = this.align(pending[0]!.ts);
    }
    for (; this.nextEnd <= wm; this.nextEnd += this.step) {
      const end = this.nextEnd;
      while (p < pending.length && pending[p]!.ts < end) this.fold(pending[p++]!);
      const w = this.open.length && this.open[0]!.end === end ? this.open.shift()! : undefined;
      const table = w ? w.table : this.table();
      // [quirk] a hopping window with no row clears the buffer: released rows after it are lost.
      if (this.hopping && table.seen === 0) p = pending.length;
      let start = this.hopping ? this.previous - this.step : this.previous;
      if (start <= 0) start = end - this.length;
      this.previous = end;
      this.emitTable(table, { start, end, trigger: end });
    }
    while (p < pending.length) this.fold(pending[p++]!);
  }

  /** Adds a row to each window (end ≥ nextEnd) that will hold it, opening windows as needed. */
  private fold(t: Tuple): void {
    const ts = t.ts;
    // The first window that holds the row: the first end after ts (not before nextEnd).
    let end = this.nextEnd;
    if (ts >= end) end += (Math.floor((ts - end) / this.step) + 1) * this.step;
    const last = this.hopping ? ts + this.length : end;
    const open = this.open;
    let i = 0;
    while (i < open.length && open[i]!.end < end) i++;
    let evaluated = false;
    for (; end <= last; end += this.step) {
      if (this.hopping && end - this.length > ts) break;
      if (i === open.length) open.push({ end, table: this.table() });
      const w = open[i++]!;
      if (!evaluated) {
        this.ev.evaluate(t);
        evaluated = true;
      }
      w.table.add(t, this.ev);
    }
  }
}

/**
 * SESSIONWINDOW: the buffered operator's `nextSessionEnd` run row by row. A session's end is
 * decided by the row after it (or by the watermark once it is past the timeout). The end is
 * either the last row + timeout or the current max-duration tick, so a row at or beyond the tick
 * may still fall into the next session: such rows are held (not folded) until a later row moves
 * the tick past them or closes the session, and those left over start the next session.
 */
export class IncEventSessionWindowOp extends IncEventWindowOp {
  private current: GroupTable | undefined;
  /** Rows of the open session with ts ≥ tick, in order, not yet folded. */
  private held: Tuple[] = [];
  private et = 0;
  private tick = 0;
  private prev = NaN;
  private endedByTick = false;
  private readonly maxDuration: number;
  private readonly timeout: number;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec) {
    super(name, env, spec, inc, spec.length / unitMs(spec));
    this.maxDuration = spec.length;
    this.timeout = spec.interval;
  }

  protected ownState(): unknown {
    return {
      table: this.current?.snapshot() ?? null,
      held: this.held,
      et: this.et,
      tick: this.tick,
      prev: this.prev,
      endedByTick: this.endedByTick,
    };
  }

  protected loadOwn(s: unknown): void {
    const st = s as { table: unknown; held: Tuple[]; et: number; tick: number; prev: number; endedByTick: boolean };
    this.current = st.table === null ? undefined : GroupTable.restore(st.table, this.inc);
    this.held = st.held;
    this.et = st.et;
    this.tick = st.tick;
    this.prev = st.prev;
    this.endedByTick = st.endedByTick;
  }

  protected fire(wm: number): void {
    for (const r of this.rows) this.step(r);
    if (this.current && wm - this.prev > this.timeout) this.closeSession(this.prev + this.timeout, false);
  }

  private step(r: Tuple): void {
    if (this.current) {
      let end = NaN;
      let ticked = false;
      if (r.ts - this.prev > this.timeout) end = this.prev + this.timeout;
      if (r.ts > this.tick) {
        if (this.tick - this.maxDuration > this.et && !(this.tick >= end)) {
          end = this.tick;
          ticked = true;
        }
        this.tick += this.maxDuration;
      }
      if (!Number.isNaN(end)) {
        const rest = this.closeSession(end, ticked);
        // The buffered operator recomputes from the first row left: replay them, then r.
        for (const h of rest) this.step(h);
        this.step(r);
        return;
      }
    } else {
      this.current = this.table();
      this.et = r.ts;
      this.tick = this.align(r.ts);
      // The first row of a session never ends one; it only moves a tick it has passed.
      if (r.ts > this.tick) this.tick += this.maxDuration;
    }
    this.foldHeld(this.tick);
    if (r.ts >= this.tick) this.held.push(r);
    else this.fold(r);
    this.prev = r.ts;
  }

  private fold(r: Tuple): void {
    this.ev.evaluate(r);
    this.current!.add(r, this.ev);
  }

  /** Folds the held rows older than `before`. */
  private foldHeld(before: number): void {
    const held = this.held;
    let i = 0;
    while (i < held.length && held[i]!.ts < before) this.fold(held[i++]!);
    if (i) this.held = held.slice(i);
  }

  /** Emits the session's rows older than `end`; returns the held rows that belong to the next one. */
  private closeSession(end: number, ticked: boolean): Tuple[] {
    this.foldHeld(end);
    const rest = this.held;
    this.held = [];
    const table = this.current!;
    this.current = undefined;
    if (!this.endedByTick) this.previous = this.et;
    const start = this.previous;
    this.previous = end;
    this.endedByTick = ticked;
    this.emitTable(table, { start, end, trigger: end });
    return rest;
  }
}
