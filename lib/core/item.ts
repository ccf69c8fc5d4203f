/**
 * What flows between a rule's operators: a single tuple, a collection (a window's rows, joined
 * rows, or groups), the projected result of one emission, or a forwarded error (`sendError`).
 */
import type { RowError } from "../errors.ts";
import type { GroupRow, Row, Tuple, WindowRange } from "../expr/row.ts";
import type { Obj } from "../value/values.ts";

export class Collection {
  rows: Row[];
  readonly window: WindowRange | null;
  /** Set by the aggregate operator: one GroupRow per group, in first-appearance order. */
  groups: GroupRow[] | null;
  /** Set by an incremental window: its groups are already filtered and keyed (`rows` is empty). */
  inc: IncInfo | null;
  /**
   * Set when an upstream node reuses these rows once the push returns (an incremental window's
   * groups, reset for the next window): a node keeping them longer holds the lease meanwhile.
   * Null: the rows are the collection's to keep.
   */
  lease: Lease | null;
  constructor(rows: Row[], window: WindowRange | null) {
    this.rows = rows;
    this.window = window;
    this.groups = null;
    this.inc = null;
    this.lease = null;
  }

  /** A collection of the same window made from this one's rows or groups: it carries the lease on. */
  derive(rows: Row[]): Collection {
    const out = new Collection(rows, this.window);
    out.lease = this.lease;
    return out;
  }
}

/** Rows reused by their producer unless `held` (a count: several nodes may keep them). */
export interface Lease {
  held: number;
}

/**
 * The lease of rows a node writes into again on a later push whatever is held: row_number() and
 * WHERE aggregates are cached on the tuples, which overlapping windows share. Not kept past the push.
 */
export const UNLENDABLE: Lease = { held: 0 };

/**
 * What an incremental window (windows §9) did row by row in place of the WHERE and GROUP BY
 * operators that follow it: those operators report these outcomes as if they had done the work.
 */
export interface IncInfo {
  /** Rows that passed WHERE (0: the WHERE operator emits nothing). */
  readonly passed: number;
  /** The first WHERE failure in row order (the WHERE operator fails the window with it). */
  readonly whereError: RowError | null;
  /** The first GROUP BY key failure among the passing rows. */
  readonly groupError: RowError | null;
}

/** One emission: the rows a sink receives together (`sendSingle: false`). */
export class Emission {
  /** The row of a one-row emission made by `Emission.one` (a source tuple's projection), else null. */
  readonly row: Obj | null;
  private list: Obj[] | null;
  /** Metadata of the source row, for `sendMetaToSink` and templates. */
  readonly meta: Obj | null;
  constructor(rows: Obj[], meta: Obj | null, row: Obj | null = null) {
    this.row = row;
    this.list = row === null ? rows : null;
    this.meta = meta;
  }

  /** A one-row emission: its list is made only if a consumer asks for `rows` (the pipe sink reads `row`). */
  static one(row: Obj, meta: Obj | null): Emission {
    return new Emission(NO_ROWS, meta, row);
  }

  get rows(): Obj[] {
    return this.list ?? (this.list = [this.row!]);
  }
}

const NO_ROWS: Obj[] = [];

/**
 * An event-time watermark (windows §6.2): every row with a smaller timestamp has been released.
 * Passed through uncounted by operators between the watermark operator and the window.
 */
export class Watermark {
  readonly ts: number;
  constructor(ts: number) {
    this.ts = ts;
  }
}

export type Item = Tuple | Collection | Emission | RowError | Watermark;

/** Anything that accepts items: an operator or a sink. */
export interface Consumer {
  push(item: Item): void;
}
