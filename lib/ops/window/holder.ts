/**
 * What a window holds between two firings (windows §9): its rows (the buffered evaluator,
 * rows.ts) or accumulators folded row by row (the incremental one, tables.ts). A window kind —
 * *when* it fires — takes one of these and calls it once per row; the firing asks it for the
 * emission. Snapshots merge the holder's fields into the window's own (the stored format).
 */
import type { Tuple, WindowRange } from "../../expr/row.ts";
import type { Collection } from "../../core/item.ts";

export interface Holder {
  /** The holder's part of the window's checkpoint, e.g. `{ rows }` or `{ table }`. */
  save(): Record<string, unknown>;
  /** Loads `save()`'s fields from a checkpoint. */
  load(s: Record<string, unknown>): void;
}

/** TUMBLINGWINDOW and SESSIONWINDOW: one pane; a firing at `end` takes what is older than it. */
export interface PaneHolder extends Holder {
  add(t: Tuple): void;
  /** A row is held that a firing would emit. */
  held(): boolean;
  /** Timestamp of the oldest row held. */
  firstTs(): number;
  /** The window of the rows older than `end`; null when nothing is emitted (eKuiper's inc_agg_window, no row). */
  takeBefore(end: number, range: WindowRange): Collection | null;
}

/** HOPPINGWINDOW: overlapping windows; a firing takes the rows of [left, end). */
export interface HopHolder extends Holder {
  add(t: Tuple): void;
  held(): boolean;
  /** Timestamp of the last row taken. */
  lastTs(): number;
  takeHop(left: number, end: number, range: WindowRange): Collection | null;
}

/** COUNTWINDOW(n, m): the i-th row (from 1) arrives; a firing at row i takes rows (i − n, i]. */
export interface CountHolder extends Holder {
  add(t: Tuple, i: number): void;
  /** The window closing at row i, fired at `now`; null when none closes there. */
  takeCount(i: number, n: number, now: number): Collection | null;
}

/**
 * Event-time TUMBLINGWINDOW / HOPPINGWINDOW (windows §6.3): rows arrive released, in timestamp
 * order; each watermark fires the windows of the grid that end at or before it.
 */
export interface GridHolder extends Holder {
  add(t: Tuple): void;
  /** The timestamp the grid is aligned from at watermark `wm`, if the first window can be placed. */
  opening(wm: number): number | undefined;
  /** Tumbling: the rows older than `end`. */
  takeBefore(end: number, range: WindowRange): Collection | null;
  /** Hopping: the rows of [left, end). */
  takeHop(left: number, end: number, range: WindowRange): Collection | null;
  /** After the firings of a watermark; `nextEnd` is the end of the next window. */
  settle(nextEnd: number): void;
  /** The checkpoint's `own` field (the grid position and open windows), and its inverse. */
  own(nextEnd: number | undefined): unknown;
  loadOwn(s: unknown): number | undefined;
}
