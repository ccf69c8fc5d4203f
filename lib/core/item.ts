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
  /** Whether a node may keep these rows and groups past the push (see Ownership); OWNED unless set. */
  ownership: Ownership;
  constructor(rows: Row[], window: WindowRange | null) {
    this.rows = rows;
    this.window = window;
    this.groups = null;
    this.inc = null;
    this.ownership = OWNED;
  }

  /** A collection of the same window made from this one's rows or groups: it carries the ownership on. */
  derive(rows: Row[]): Collection {
    const out = new Collection(rows, this.window);
    out.ownership = this.ownership;
    return out;
  }
}

/**
 * Who holds a collection's rows and groups, which says whether a node may keep them past its push
 * (an item spread across turns, Operator.spreadRows, or waiting behind one) and whether anything
 * writes into them later. Two optimisations make rows more than the collection's: an incremental
 * window reuses its group objects for its next window (ops/window/inc-groups.ts), and row_number()
 * and WHERE aggregates cache values on tuples that overlapping windows share (ops/window-func.ts,
 * ops/agg-func.ts). The rule for every node that keeps or writes rows:
 *
 * - `owned` (OWNED): the collection's; a node may keep them as long as it needs.
 * - `loan` (a Loan): the producer resets and reuses them once the push returns, unless the loan is
 *   held. A node keeping them past the push holds it (`held++`) until it is done with them
 *   (`held--`); the producer builds fresh ones meanwhile. Nodes read them and never write them.
 * - `transient` (TRANSIENT): an upstream node writes into them again on a later push, held or
 *   not: valid within this push only. A node handles it to the end within the push (spreadRows
 *   does it in one pass) and keeps nothing of it.
 *
 * A collection made from another's rows or groups carries the ownership on (`derive`); one over a
 * new list of rows (WHERE's kept rows) is owned.
 */
export type Ownership = Owned | Loan | Transient;

export interface Owned {
  readonly kind: "owned";
}

/** Rows reused by their producer unless `held` (a count: several nodes may keep them). */
export interface Loan {
  readonly kind: "loan";
  held: number;
}

export interface Transient {
  readonly kind: "transient";
}

export const OWNED: Owned = Object.freeze({ kind: "owned" });
export const TRANSIENT: Transient = Object.freeze({ kind: "transient" });

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
