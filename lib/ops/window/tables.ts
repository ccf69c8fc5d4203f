/**
 * The incremental evaluator's holders (windows §9): accumulator tables (inc-groups.ts),
 * one per open window. Each row is evaluated once and folded into every open window it belongs
 * to, then dropped. Rows reach a processing-time window in timestamp order and after every timer
 * due before them (WindowOp), which is what makes "the rows with ts < T" of the buffered scan
 * equal to "the rows folded before the firing at T".
 */
import type { Tuple, WindowRange } from "../../expr/row.ts";
import type { IncSpec } from "../../plan/window-spec.ts";
import type { Collection } from "../../core/item.ts";
import type { CountHolder, GridHolder, HopHolder, PaneHolder } from "./holder.ts";
import { GroupTable } from "./inc-groups.ts";
import { RowEval } from "./row-eval.ts";

/** A window's groups as emitted; eKuiper's inc_agg_window emits nothing for a window without rows. */
export function tableEmission(inc: IncSpec, table: GroupTable, range: WindowRange): Collection | null {
  if (inc.ekuiper && table.seen === 0) return null;
  return table.collection(range);
}

/** TUMBLINGWINDOW / SESSIONWINDOW: one table, emitted whole and replaced at each firing. */
export class TablePane implements PaneHolder {
  private current: GroupTable;
  private readonly ev: RowEval;

  constructor(private readonly inc: IncSpec) {
    this.ev = new RowEval(inc);
    this.current = new GroupTable(inc);
  }

  add(t: Tuple): void {
    let table = this.current;
    // The last emission's groups are still being read (its loan is held): this window starts
    // from a fresh index rather than reset them under the reader.
    if (table.seen === 0 && table.lent()) this.current = table = new GroupTable(this.inc);
    this.ev.evaluate(t);
    table.add(t, this.ev);
  }

  held(): boolean {
    return this.current.seen > 0;
  }

  firstTs(): number {
    return this.current.firstTs;
  }

  /** Every folded row is older than the firing (see above): the whole table. */
  takeBefore(_end: number, range: WindowRange): Collection | null {
    const table = this.current;
    this.current = table.next();
    return tableEmission(this.inc, table, range);
  }

  save(): Record<string, unknown> {
    return { table: this.current.snapshot() };
  }

  load(s: Record<string, unknown>): void {
    this.current = GroupTable.restore(s.table, this.inc);
  }
}

interface OpenWindow {
  /** Left edge (hopping) or closing row index (count) of the window. */
  readonly at: number;
  readonly table: GroupTable;
}

/**
 * HOPPINGWINDOW: one table per open window. The window emitted at tick T after the tick P covers
 * [min(T − L, P + H − L), T) (§3.4), so its left edge is known one tick ahead: windows open on
 * the grid first − L + k·H as rows reach them, and a row joins every open window. Memory: keys ×
 * ⌈L/H⌉ tables. Exact whenever the ticker keeps its grid (always on the virtual clock; on a wall
 * clock a re-aligned tick stays on it when H divides its parent unit).
 */
export class TableHops implements HopHolder {
  private readonly open: OpenWindow[] = [];
  private last = -Infinity;
  private readonly ev: RowEval;

  /** `nextLeft`: the left edge of the first window (the first aligned tick − L). */
  constructor(
    private readonly inc: IncSpec,
    private nextLeft: number,
    private readonly hop: number,
    private readonly length: number,
  ) {
    this.ev = new RowEval(inc);
  }

  add(t: Tuple): void {
    const ts = t.ts;
    this.last = ts;
    while (this.nextLeft <= ts) {
      this.open.push({ at: this.nextLeft, table: new GroupTable(this.inc) });
      this.nextLeft += this.hop;
    }
    const open = this.open;
    if (open.length === 0) return; // in a gap between windows (hop > length)
    this.ev.evaluate(t);
    for (let i = 0; i < open.length; i++) open[i]!.table.add(t, this.ev);
  }

  held(): boolean {
    return this.open.some((w) => w.table.seen > 0);
  }

  lastTs(): number {
    return this.last;
  }

  takeHop(left: number, end: number, range: WindowRange): Collection | null {
    const open = this.open;
    let table: GroupTable | undefined;
    let drop = 0;
    while (drop < open.length && open[drop]!.at < left) drop++;
    if (drop < open.length && open[drop]!.at === left) table = open[drop++]!.table;
    // Off the grid (a re-aligned wall-clock tick with H not dividing its unit): the nearest
    // earlier window stands in; it may hold a few rows older than `left`.
    else if (drop > 0) table = open[drop - 1]!.table;
    open.splice(0, drop);
    const nextLeft = end + this.hop - this.length;
    if (this.nextLeft < nextLeft) this.nextLeft = nextLeft;
    return tableEmission(this.inc, table ?? new GroupTable(this.inc), range);
  }

  save(): Record<string, unknown> {
    return { open: this.open.map((w) => [w.at, w.table.snapshot()]), nextLeft: this.nextLeft, lastTs: this.last };
  }

  load(s: Record<string, unknown>): void {
    for (const [left, t] of s.open as [number, unknown][]) this.open.push({ at: left, table: GroupTable.restore(t, this.inc) });
    this.nextLeft = s.nextLeft as number;
    this.last = s.lastTs as number;
  }
}

/**
 * COUNTWINDOW(n, m): the window closing at row i (i a multiple of m, i ≥ n) holds rows
 * (i − n, i], so a row joins the ⌈n/m⌉ windows closing within n rows of it.
 */
export class CountTables implements CountHolder {
  private readonly open: OpenWindow[] = [];
  /** Closing row index of the next window to open. */
  private nextEnd: number;
  private readonly ev: RowEval;

  constructor(
    private readonly inc: IncSpec,
    private readonly n: number,
    private readonly m: number,
    /** eKuiper's inc_agg_window: window_start is the first row's time (windows §9). */
    private readonly firstRowStart: boolean,
  ) {
    this.ev = new RowEval(inc);
    this.nextEnd = Math.ceil(n / m) * m;
  }

  add(t: Tuple, i: number): void {
    while (this.nextEnd - this.n < i) {
      this.open.push({ at: this.nextEnd, table: new GroupTable(this.inc) });
      this.nextEnd += this.m;
    }
    const open = this.open;
    if (open.length === 0) return; // before the first window: its n rows start later
    this.ev.evaluate(t);
    for (let k = 0; k < open.length; k++) open[k]!.table.add(t, this.ev);
  }

  takeCount(i: number, _n: number, now: number): Collection | null {
    if (this.open.length === 0 || this.open[0]!.at !== i) return null;
    const { table } = this.open.shift()!;
    return tableEmission(this.inc, table, { start: this.firstRowStart ? table.firstTs : now, end: now, trigger: now });
  }

  save(): Record<string, unknown> {
    return { open: this.open.map((w) => [w.at, w.table.snapshot()]), nextEnd: this.nextEnd };
  }

  load(s: Record<string, unknown>): void {
    for (const [end, t] of s.open as [number, unknown][]) this.open.push({ at: end, table: GroupTable.restore(t, this.inc) });
    this.nextEnd = s.nextEnd as number;
  }
}

/**
 * Event time, TUMBLINGWINDOW / HOPPINGWINDOW: window ends on the grid alignedEnd(first ts) + j·step;
 * a row joins every window [end − L, end) holding it (tumbling windows have no left edge: a row
 * joins the first window ending after it). The rows released since the last watermark wait in
 * `pending` (never more than one release) so that each watermark replays the buffered operator's
 * decisions in order — including the hopping quirk that drops released rows after an empty window.
 */
export class GridTables implements GridHolder {
  private pending: Tuple[] = [];
  /** The pending rows before `p` are folded. */
  private p = 0;
  /** Windows not yet emitted, by increasing end. */
  private readonly open: OpenWindow[] = [];
  /** End of the window being fired, or of the next one. */
  private nextEnd = NaN;
  private readonly ev: RowEval;

  constructor(
    private readonly inc: IncSpec,
    private readonly hopping: boolean,
    private readonly step: number,
    private readonly length: number,
  ) {
    this.ev = new RowEval(inc);
  }

  add(t: Tuple): void {
    this.pending.push(t);
  }

  opening(_wm: number): number | undefined {
    return this.pending.length ? this.pending[0]!.ts : undefined;
  }

  takeBefore(end: number, range: WindowRange): Collection | null {
    const pending = this.pending;
    this.nextEnd = end;
    while (this.p < pending.length && pending[this.p]!.ts < end) this.fold(pending[this.p++]!);
    const w = this.open.length && this.open[0]!.at === end ? this.open.shift()! : undefined;
    const table = w ? w.table : new GroupTable(this.inc);
    // [quirk] a hopping window with no row clears the buffer: released rows after it are lost.
    if (this.hopping && table.seen === 0) this.p = pending.length;
    return tableEmission(this.inc, table, range);
  }

  takeHop(_left: number, end: number, range: WindowRange): Collection | null {
    return this.takeBefore(end, range);
  }

  settle(nextEnd: number): void {
    this.nextEnd = nextEnd;
    const pending = this.pending;
    while (this.p < pending.length) this.fold(pending[this.p++]!);
    pending.length = 0;
    this.p = 0;
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
    while (i < open.length && open[i]!.at < end) i++;
    let evaluated = false;
    for (; end <= last; end += this.step) {
      if (this.hopping && end - this.length > ts) break;
      if (i === open.length) open.push({ at: end, table: new GroupTable(this.inc) });
      const w = open[i++]!;
      if (!evaluated) {
        this.ev.evaluate(t);
        evaluated = true;
      }
      w.table.add(t, this.ev);
    }
  }

  save(): Record<string, unknown> {
    return { pending: this.pending };
  }

  load(s: Record<string, unknown>): void {
    this.pending = s.pending as Tuple[];
  }

  own(nextEnd: number | undefined): unknown {
    return { open: this.open.map((w) => [w.at, w.table.snapshot()]), nextEnd: nextEnd ?? NaN };
  }

  loadOwn(s: unknown): number | undefined {
    const st = s as { open: [number, unknown][]; nextEnd: number | null };
    for (const [end, t] of st.open) this.open.push({ at: end, table: GroupTable.restore(t, this.inc) });
    return typeof st.nextEnd === "number" && !Number.isNaN(st.nextEnd) ? st.nextEnd : undefined;
  }
}
