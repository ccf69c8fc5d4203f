/**
 * Incremental windows in processing time (windows §3–§4 semantics, §9 evaluation): the same
 * triggers and window ranges as the buffered operators, but each row is folded into the
 * accumulators of every window it belongs to and dropped. Rows reach a processing-time window in
 * timestamp order and after every timer due before them (WindowOp), which is what makes "the
 * rows with ts < T" of the buffered scan equal to "the rows folded before the tick at T".
 */
import type { Tuple, WindowRange } from "../expr/row.ts";
import type { IncSpec, WindowSpec } from "../plan/window-spec.ts";
import { alignedEnd } from "./align.ts";
import type { Timer } from "./clock.ts";
import { GroupTable, RowEval } from "./inc-groups.ts";
import { Ticker } from "./ticker.ts";
import { unitMs } from "./tumbling.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

/** Common part of the incremental window operators. */
export abstract class IncWindowOp extends WindowOp {
  protected readonly inc: IncSpec;
  protected readonly ev: RowEval;

  constructor(name: string, env: WindowEnv, inc: IncSpec, eventTime = false) {
    super(name, env, eventTime);
    this.inc = inc;
    this.ev = new RowEval(inc);
  }

  protected table(): GroupTable {
    return new GroupTable(this.inc);
  }

  /** A group table from a checkpoint. */
  protected loadTable(s: unknown): GroupTable {
    return GroupTable.restore(s, this.inc);
  }

  /** Emits a window's groups; eKuiper's inc_agg_window emits nothing for a window without rows. */
  protected emitTable(table: GroupTable, range: WindowRange): void {
    if (this.inc.ekuiper && table.seen === 0) return;
    this.emit(table.collection(range));
  }
}

/** TUMBLINGWINDOW: one table, emitted and replaced at every tick. */
export class IncTumblingWindowOp extends IncWindowOp {
  private current: GroupTable;
  private previous: number;
  private readonly ticker: Ticker;
  private readonly length: number;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec) {
    super(name, env, inc);
    this.current = this.table();
    this.length = spec.length;
    this.previous = this.clock.now();
    this.ticker = new Ticker(this.clock, this.zone, spec.length / unitMs(spec), spec.unit!, spec.length, (t) => this.scan(t));
    this.ticker.start();
  }

  protected onRow(t: Tuple): void {
    this.ev.evaluate(t);
    this.current.add(t, this.ev);
  }

  private scan(end: number): void {
    const table = this.current;
    this.current = this.table();
    const start = this.previous > 0 ? this.previous : end - this.length;
    this.previous = end;
    this.emitTable(table, { start, end, trigger: end });
  }

  flushTime(): number | undefined {
    return this.current.seen ? this.ticker.nextTick : undefined;
  }

  override snapshot(): unknown {
    return { table: this.current.snapshot(), previous: this.previous, tick: this.ticker.snapshot() };
  }

  override restore(s: unknown): void {
    const st = s as { table: unknown; previous: number; tick: unknown };
    this.current = this.loadTable(st.table);
    this.previous = st.previous;
    this.ticker.restore(st.tick);
  }
}

interface OpenWindow {
  readonly left: number;
  readonly table: GroupTable;
}

/**
 * HOPPINGWINDOW: one table per open window. The window emitted at tick T after the tick P covers
 * [min(T − L, P + H − L), T) (§3.4), so its left edge is known one tick ahead: windows open on
 * the grid first − L + k·H as rows reach them, and a row joins every open window. Memory: keys ×
 * ⌈L/H⌉ tables. Exact whenever the ticker keeps its grid (always on the virtual clock; on a wall
 * clock a re-aligned tick stays on it when H divides its parent unit).
 */
export class IncHoppingWindowOp extends IncWindowOp {
  private readonly open: OpenWindow[] = [];
  private nextLeft: number;
  private previous: number;
  private lastTs = -Infinity;
  private readonly ticker: Ticker;
  private readonly length: number;
  private readonly hop: number;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec) {
    super(name, env, inc);
    this.length = spec.length;
    this.hop = spec.interval;
    this.previous = this.clock.now();
    const k = spec.interval / unitMs(spec);
    this.nextLeft = alignedEnd(this.previous, k, spec.unit!, this.zone) - spec.length;
    this.ticker = new Ticker(this.clock, this.zone, k, spec.unit!, spec.interval, (t) => this.scan(t));
    this.ticker.start();
  }

  protected onRow(t: Tuple): void {
    const ts = t.ts;
    this.lastTs = ts;
    while (this.nextLeft <= ts) {
      this.open.push({ left: this.nextLeft, table: this.table() });
      this.nextLeft += this.hop;
    }
    const open = this.open;
    if (open.length === 0) return; // in a gap between windows (hop > length)
    this.ev.evaluate(t);
    for (let i = 0; i < open.length; i++) open[i]!.table.add(t, this.ev);
  }

  private scan(end: number): void {
    const delta = end - this.previous - this.hop;
    const left = end - this.length - (delta > 0 ? delta : 0);
    const open = this.open;
    let table: GroupTable | undefined;
    let drop = 0;
    while (drop < open.length && open[drop]!.left < left) drop++;
    if (drop < open.length && open[drop]!.left === left) table = open[drop++]!.table;
    // Off the grid (a re-aligned wall-clock tick with H not dividing its unit): the nearest
    // earlier window stands in; it may hold a few rows older than `left`.
    else if (drop > 0) table = open[drop - 1]!.table;
    open.splice(0, drop);
    const nextLeft = end + this.hop - this.length;
    if (this.nextLeft < nextLeft) this.nextLeft = nextLeft;
    let start = this.previous - this.hop;
    if (start <= 0) start = end - this.length;
    this.previous = end;
    this.emitTable(table ?? this.table(), { start, end, trigger: end });
  }

  flushTime(): number | undefined {
    if (!this.open.some((w) => w.table.seen > 0)) return undefined;
    let t = this.ticker.nextTick;
    while (t <= this.lastTs) t += this.hop;
    return t;
  }

  override snapshot(): unknown {
    const open = this.open.map((w) => [w.left, w.table.snapshot()]);
    return { open, nextLeft: this.nextLeft, previous: this.previous, lastTs: this.lastTs, tick: this.ticker.snapshot() };
  }

  override restore(s: unknown): void {
    const st = s as { open: [number, unknown][]; nextLeft: number; previous: number; lastTs: number; tick: unknown };
    for (const [left, t] of st.open) this.open.push({ left, table: this.loadTable(t) });
    this.nextLeft = st.nextLeft;
    this.previous = st.previous;
    this.lastTs = st.lastTs;
    this.ticker.restore(st.tick);
  }
}

/**
 * SESSIONWINDOW: the open session's table; a timeout or a max-duration tick emits it whole
 * (every held row is older than the timer that fires).
 */
export class IncSessionWindowOp extends IncWindowOp {
  private current: GroupTable;
  private start = 0;
  private timeoutTimer: Timer | undefined;
  private timeoutAt = 0;
  private readonly maxDuration: number;
  private readonly timeout: number;
  private readonly ticker: Ticker;
  private readonly onTimeout = (): void => this.timedOut();

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec) {
    super(name, env, inc);
    this.current = this.table();
    this.maxDuration = spec.length;
    this.timeout = spec.interval;
    this.ticker = new Ticker(this.clock, this.zone, spec.length / unitMs(spec), spec.unit!, spec.length, (t) => this.tick(t));
    this.ticker.start();
  }

  protected onRow(t: Tuple): void {
    this.ev.evaluate(t);
    this.current.add(t, this.ev);
    if (!this.timeoutTimer) this.start = t.ts;
    // Every row restarts the timeout: the pending timer moves (windows §4.4).
    this.timeoutAt = t.ts + this.timeout;
    this.timeoutTimer = this.timeoutTimer ? this.clock.reschedule(this.timeoutTimer, this.timeoutAt) : this.clock.schedule(this.timeoutAt, this.onTimeout);
  }

  private timedOut(): void {
    if (!this.current.seen) return; // [quirk] stays "active": the next row keeps the start
    const now = this.clock.now();
    const table = this.current;
    this.current = this.table();
    this.timeoutTimer = undefined;
    this.emitTable(table, { start: this.start, end: now, trigger: now });
  }

  private tick(T: number): void {
    const table = this.current;
    if (!table.seen || T - table.firstTs < this.maxDuration) return;
    this.current = this.table();
    const start = this.start;
    this.start = T;
    this.emitTable(table, { start, end: T, trigger: T });
  }

  flushTime(): number | undefined {
    return this.current.seen ? this.timeoutAt : undefined;
  }

  override snapshot(): unknown {
    const timeout = this.timeoutTimer ? this.timeoutAt : null;
    return { table: this.current.snapshot(), start: this.start, timeout, tick: this.ticker.snapshot() };
  }

  override restore(s: unknown): void {
    const st = s as { table: unknown; start: number; timeout: number | null; tick: unknown };
    this.current = this.loadTable(st.table);
    this.start = st.start;
    if (st.timeout !== null) {
      this.timeoutAt = st.timeout;
      this.timeoutTimer = this.clock.schedule(st.timeout, this.onTimeout);
    }
    this.ticker.restore(st.tick);
  }
}

interface CountWindow {
  /** Index (1-based, in rows) of the row that closes this window. */
  readonly end: number;
  readonly table: GroupTable;
}

/**
 * COUNTWINDOW(n, m): the window closing at row i (i a multiple of m, i ≥ n) holds rows
 * (i − n, i], so a row joins the ⌈n/m⌉ windows closing within n rows of it.
 */
export class IncCountWindowOp extends IncWindowOp {
  private readonly open: CountWindow[] = [];
  private count = 0;
  /** End index of the next window to open. */
  private nextEnd: number;
  private readonly n: number;
  private readonly m: number;
  /** eKuiper's inc_agg_window: window_start is the first row's time (windows §9). */
  private readonly firstRowStart: boolean;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec, firstRowStart: boolean, eventTime: boolean) {
    super(name, env, inc, eventTime);
    this.n = spec.length;
    this.m = spec.interval;
    this.nextEnd = Math.ceil(this.n / this.m) * this.m;
    this.firstRowStart = firstRowStart;
  }

  protected onRow(t: Tuple): void {
    const i = ++this.count;
    while (this.nextEnd - this.n < i) {
      this.open.push({ end: this.nextEnd, table: this.table() });
      this.nextEnd += this.m;
    }
    const open = this.open;
    if (open.length === 0) return; // before the first window: its n rows start later
    this.ev.evaluate(t);
    for (let k = 0; k < open.length; k++) open[k]!.table.add(t, this.ev);
    if (open[0]!.end !== i) return;
    const { table } = open.shift()!;
    const now = this.clock.now();
    this.emitTable(table, { start: this.firstRowStart ? table.firstTs : now, end: now, trigger: now });
  }

  flushTime(): undefined {
    return undefined;
  }

  override snapshot(): unknown {
    return { open: this.open.map((w) => [w.end, w.table.snapshot()]), count: this.count, nextEnd: this.nextEnd };
  }

  override restore(s: unknown): void {
    const st = s as { open: [number, unknown][]; count: number; nextEnd: number };
    for (const [end, t] of st.open) this.open.push({ end, table: this.loadTable(t) });
    this.count = st.count;
    this.nextEnd = st.nextEnd;
  }
}
