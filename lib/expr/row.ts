/**
 * What expressions evaluate against: a source tuple, a joined row (several tuples, sql §12.6), or
 * a group of rows (aggregate context, sql §11). All three answer the same `Row` questions.
 */
import type { Obj, Value } from "../value/values.ts";

/** Window range of a collection (windows §2.3), epoch ms. */
export interface WindowRange {
  readonly start: number;
  readonly end: number;
  readonly trigger: number;
}

export interface Row {
  /** Column `name` of stream `stream` (any stream when undefined); null when absent. */
  value(name: string, stream: string | undefined): Value;
  /** Like `value`, matching the column name case-insensitively (`basic.ignoreCase`, sql §6.3). */
  valueFold(name: string, stream: string | undefined): Value;
  /** All columns (`*` as a value; `s.*` with a stream). Joined rows merge later members over earlier ones. */
  all(stream: string | undefined): Obj;
  /** Columns for emission of `*`: joined rows keep the earliest member's value for a shared key. */
  columns(stream: string | undefined): Obj;
  /** Metadata of the (first) tuple of `stream`. */
  metadata(stream: string | undefined): Obj;
  /** Cached result of analytic call site `i` (computed before WHERE, sql §14). */
  cached(i: number): Value | undefined;
  /** Row timestamp in epoch ms (processing or event time). */
  readonly ts: number;
}

/** The metadata of a row that has none (shared, frozen). */
export const EMPTY: Obj = Object.freeze({}) as Obj;

/** Case-insensitive key lookup: the exact spelling first. */
export function getFold(data: Obj, name: string): Value {
  const v = data[name];
  if (v !== undefined) return v;
  const lower = name.toLowerCase();
  for (const k in data) if (k.toLowerCase() === lower) return data[k]!;
  return null;
}

/** One record from a source (eKuiper's Tuple). Fixed shape: every field set in the constructor. */
export class Tuple implements Row {
  data: Obj;
  meta: Obj;
  ts: number;
  emitter: string;
  /** Analytic results by call-site index, or null when the rule has none. */
  cache: Value[] | null;
  /** Estimated bytes, set by a window that holds the tuple (ops/window/held-rows.ts); 0 until then. */
  size: number;
  constructor(data: Obj, meta: Obj | null, ts: number, emitter: string) {
    this.data = data;
    this.meta = meta ?? EMPTY;
    this.ts = ts;
    this.emitter = emitter;
    this.cache = null;
    this.size = 0;
  }
  value(name: string, stream: string | undefined): Value {
    if (stream !== undefined && stream !== this.emitter) return null;
    const v = this.data[name];
    return v === undefined ? null : v;
  }
  valueFold(name: string, stream: string | undefined): Value {
    if (stream !== undefined && stream !== this.emitter) return null;
    return getFold(this.data, name);
  }
  all(stream: string | undefined): Obj {
    return stream !== undefined && stream !== this.emitter ? {} : this.data;
  }
  columns(stream: string | undefined): Obj {
    return this.all(stream);
  }
  metadata(stream: string | undefined): Obj {
    return stream !== undefined && stream !== this.emitter ? EMPTY : this.meta;
  }
  cached(i: number): Value | undefined {
    return this.cache === null ? undefined : this.cache[i];
  }
}

/** A row produced by a join: member tuples, left side first (sql §12.6). */
export class JoinedRow implements Row {
  readonly tuples: Tuple[];
  readonly ts: number;
  constructor(tuples: Tuple[]) {
    this.tuples = tuples;
    this.ts = tuples[0]!.ts;
  }
  value(name: string, stream: string | undefined): Value {
    for (const t of this.tuples) {
      if (stream !== undefined && t.emitter !== stream) continue;
      const v = t.data[name];
      // A null value in a member is "not found": the search goes on.
      if (v !== undefined && v !== null) return v;
    }
    return null;
  }
  valueFold(name: string, stream: string | undefined): Value {
    for (const t of this.tuples) {
      if (stream !== undefined && t.emitter !== stream) continue;
      const v = getFold(t.data, name);
      if (v !== null) return v;
    }
    return null;
  }
  all(stream: string | undefined): Obj {
    const out: Obj = {};
    for (const t of this.tuples) if (stream === undefined || t.emitter === stream) Object.assign(out, t.data);
    return out;
  }
  columns(stream: string | undefined): Obj {
    const out: Obj = {};
    for (let i = this.tuples.length - 1; i >= 0; i--) {
      const t = this.tuples[i]!;
      if (stream === undefined || t.emitter === stream) Object.assign(out, t.data);
    }
    return out;
  }
  metadata(stream: string | undefined): Obj {
    for (const t of this.tuples) if (stream === undefined || t.emitter === stream) return t.meta;
    return EMPTY;
  }
  cached(i: number): Value | undefined {
    for (const t of this.tuples) {
      const v = t.cached(i);
      if (v !== undefined) return v;
    }
    return undefined;
  }
}

/**
 * A group of rows in aggregate context: non-aggregate expressions read the first row (sql §11.2),
 * aggregate calls iterate `rows`. `rows` may be empty (an empty window with aggregates).
 */
export class GroupRow implements Row {
  readonly rows: Row[];
  /** `ts`, declared only: a subclass that keeps it elsewhere never has the field. */
  declare private stamp: number;
  constructor(rows: Row[], ts: number) {
    this.rows = rows;
    this.ts = ts;
  }
  /**
   * The window trigger. An accessor: an incremental window's group reads it from its columns,
   * set once for all of a window's groups (ops/window/acc-group.ts).
   */
  get ts(): number {
    return this.stamp;
  }
  set ts(ts: number) {
    this.stamp = ts;
  }
  value(name: string, stream: string | undefined): Value {
    return this.rows.length ? this.rows[0]!.value(name, stream) : null;
  }
  valueFold(name: string, stream: string | undefined): Value {
    return this.rows.length ? this.rows[0]!.valueFold(name, stream) : null;
  }
  all(stream: string | undefined): Obj {
    return this.rows.length ? this.rows[0]!.all(stream) : {};
  }
  columns(stream: string | undefined): Obj {
    return this.rows.length ? this.rows[0]!.columns(stream) : {};
  }
  metadata(stream: string | undefined): Obj {
    return this.rows.length ? this.rows[0]!.metadata(stream) : EMPTY;
  }
  cached(i: number): Value | undefined {
    return this.rows.length ? this.rows[0]!.cached(i) : undefined;
  }
}

/** Per-evaluation context: the window range of the collection being evaluated, if any. */
export interface EvalCtx {
  window: WindowRange | null;
}
