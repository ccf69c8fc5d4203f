/**
 * What flows between a rule's operators: a single tuple, a collection (a window's rows, joined
 * rows, or groups), the projected result of one emission, or a forwarded error (`sendError`).
 */
import type { RowError } from "../errors.ts";
import type { GroupRow, Row, Tuple, WindowRange } from "../expr/row.ts";
import type { Obj } from "../expr/values.ts";

export class Collection {
  rows: Row[];
  readonly window: WindowRange | null;
  /** Set by the aggregate operator: one GroupRow per group, in first-appearance order. */
  groups: GroupRow[] | null;
  constructor(rows: Row[], window: WindowRange | null) {
    this.rows = rows;
    this.window = window;
    this.groups = null;
  }
}

/** One emission: the rows a sink receives together (`sendSingle: false`). */
export class Emission {
  readonly rows: Obj[];
  /** Metadata of the source row, for `sendMetaToSink` and templates. */
  readonly meta: Obj | null;
  constructor(rows: Obj[], meta: Obj | null) {
    this.rows = rows;
    this.meta = meta;
  }
}

export type Item = Tuple | Collection | Emission | RowError;

/** Anything that accepts items: an operator or a sink. */
export interface Consumer {
  push(item: Item): void;
}
