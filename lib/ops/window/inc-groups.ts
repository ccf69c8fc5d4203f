/**
 * The state of incremental windows (windows §9): a window's groups as fixed-shape
 * accumulator sets. A row is evaluated once — WHERE (when it runs after the window), the GROUP BY
 * key, every aggregate's arguments — and folded into each open window it belongs to; the row
 * itself is never kept, only the first row of each group (its non-aggregated columns).
 */
import { RowError } from "../../errors.ts";
import type { IncrementalGroup } from "../../expr/compile-call.ts";
import { EMPTY, GroupRow, Tuple, type EvalCtx, type Row, type WindowRange } from "../../expr/row.ts";
import { fmtV, type Obj, type Value } from "../../value/values.ts";
import type { Accumulator } from "../../functions/registry.ts";
import type { IncSpec } from "../../plan/window-spec.ts";
import { Collection, type IncInfo, type Loan } from "../../core/item.ts";
import { truthy } from "../../expr/truthy.ts";

const NO_WINDOW: EvalCtx = { window: null };

/** One row's evaluation; the fields are overwritten for every row (no per-row allocation). */
export class RowEval {
  /** The row passed WHERE (always true without WHERE). */
  passed = false;
  whereError: RowError | null = null;
  key = "";
  keyError: RowError | null = null;
  /** Argument values per aggregate slot (scratch arrays reused row after row). */
  readonly values: Value[][];
  /** Index of the first failing argument per slot for this row, or -1. */
  readonly failedArg: Int32Array;
  readonly argErrors: (RowError | null)[];
  private readonly spec: IncSpec;

  constructor(spec: IncSpec) {
    this.spec = spec;
    this.values = spec.aggs.map((a) => new Array<Value>(a.args.length).fill(null));
    this.failedArg = new Int32Array(spec.aggs.length).fill(-1);
    this.argErrors = spec.aggs.map(() => null);
  }

  evaluate(t: Tuple): void {
    const spec = this.spec;
    this.whereError = null;
    this.keyError = null;
    this.passed = true;
    if (spec.where) {
      try {
        this.passed = truthy(spec.where(t, NO_WINDOW));
      } catch (e) {
        if (!(e instanceof RowError)) throw e;
        this.whereError = e;
        this.passed = false;
      }
      if (!this.passed) return;
    }
    const dims = spec.dims;
    if (dims.length) {
      try {
        if (dims.length === 1) this.key = fmtV(dims[0]!(t, NO_WINDOW));
        else {
          let key = "";
          for (let i = 0; i < dims.length; i++) key += fmtV(dims[i]!(t, NO_WINDOW)) + ",";
          this.key = key;
        }
      } catch (e) {
        if (!(e instanceof RowError)) throw e;
        this.keyError = e;
        return;
      }
    }
    const aggs = spec.aggs;
    for (let s = 0; s < aggs.length; s++) {
      const args = aggs[s]!.args;
      const vals = this.values[s]!;
      let i = 0;
      try {
        for (; i < args.length; i++) vals[i] = args[i]!(t, NO_WINDOW);
        this.failedArg[s] = -1;
      } catch (e) {
        if (!(e instanceof RowError)) throw e;
        this.failedArg[s] = i;
        this.argErrors[s] = e;
      }
    }
  }
}

/** The rows of a group that keeps only columns of its first row (never written: frozen). */
const NO_ROWS: Row[] = Object.freeze([]) as unknown as Row[];

/**
 * A group of an incremental window: the group's first row (or, in eKuiper's inc_agg_window, its
 * last) and one accumulator per aggregate call. Read by aggregate calls through `aggregate`.
 * When the rule reads only some columns of it (IncSpec.keep), the group keeps their values (with
 * the row's stream and metadata) instead of the row: W2-1M's groups read `device` only, and the
 * parsed message held per group was most of a group's bytes (bench/group-bytes.ts).
 */
export class AccGroupRow extends GroupRow implements IncrementalGroup {
  readonly accs: Accumulator[];
  /** Generation (GroupIndex.nextGen) of the table the group was last placed in. */
  gen = -1;
  /** The first argument error per slot in (argument, row) order, as the buffered path meets it. */
  private errors: (RowError | null)[] | null = null;
  private errorArg: Int32Array | null = null;
  /** IncSpec.keep: the columns kept; null: the whole row is in `rows`. */
  private readonly keep: readonly string[] | null;
  /** The kept values (undefined: absent from the row): the value itself for one column, else an array. */
  private kept: Value | undefined | (Value | undefined)[] = undefined;
  private emitter = "";
  private meta: Obj = EMPTY;

  constructor(first: Tuple | null, spec: IncSpec) {
    const keep = spec.keep ?? null;
    super(keep !== null ? NO_ROWS : first ? [first] : [], 0);
    this.keep = keep;
    if (keep !== null && first !== null) this.capture(first);
    const aggs = spec.aggs;
    const accs = new Array<Accumulator>(aggs.length);
    for (let s = 0; s < aggs.length; s++) accs[s] = aggs[s]!.accumulator();
    this.accs = accs;
  }

  private capture(t: Tuple): void {
    const keep = this.keep!;
    const d = t.data;
    if (keep.length === 1) this.kept = d[keep[0]!];
    else {
      const kept = (this.kept ?? new Array(keep.length)) as (Value | undefined)[];
      for (let i = 0; i < keep.length; i++) kept[i] = d[keep[i]!];
      this.kept = kept;
    }
    this.emitter = t.emitter;
    this.meta = t.meta;
  }

  /** The kept value of column `name` (undefined: absent). */
  private keptValue(name: string): Value | undefined {
    const keep = this.keep!;
    if (keep.length === 1) return keep[0] === name ? (this.kept as Value | undefined) : undefined;
    const i = keep.indexOf(name);
    return i < 0 || this.kept === undefined ? undefined : (this.kept as (Value | undefined)[])[i];
  }

  /** The kept columns present in the first row, as an object (fresh at each call). */
  private keptColumns(): Obj {
    const out: Obj = {};
    const keep = this.keep!;
    for (let i = 0; i < keep.length; i++) {
      const v = this.keptValue(keep[i]!);
      if (v !== undefined) out[keep[i]!] = v;
    }
    return out;
  }

  override value(name: string, stream: string | undefined): Value {
    if (this.keep === null) return super.value(name, stream);
    if (stream !== undefined && stream !== this.emitter) return null;
    const v = this.keptValue(name);
    return v === undefined ? null : v;
  }

  override valueFold(name: string, stream: string | undefined): Value {
    if (this.keep === null) return super.valueFold(name, stream);
    return new Tuple(this.keptColumns(), null, 0, this.emitter).valueFold(name, stream);
  }

  override all(stream: string | undefined): Obj {
    if (this.keep === null) return super.all(stream);
    return stream !== undefined && stream !== this.emitter ? {} : this.keptColumns();
  }

  override columns(stream: string | undefined): Obj {
    return this.keep === null ? super.columns(stream) : this.all(stream);
  }

  override metadata(stream: string | undefined): Obj {
    if (this.keep === null) return super.metadata(stream);
    return stream !== undefined && stream !== this.emitter ? EMPTY : this.meta;
  }

  override cached(i: number): Value | undefined {
    return this.keep === null ? super.cached(i) : undefined;
  }

  /** The first row as a checkpoint keeps it: the row, or a row of the kept columns; null: none. */
  private firstRow(): Tuple | null {
    if (this.keep === null) return (this.rows[0] as Tuple | undefined) ?? null;
    return this.emitter === "" && this.kept === undefined ? null : new Tuple(this.keptColumns(), this.meta, 0, this.emitter);
  }

  /**
   * The group starts over for the next window with `first` as its first row: the accumulators
   * reset in place, so a key that comes back allocates nothing.
   */
  reopen(first: Tuple): void {
    if (this.keep === null) this.rows[0] = first;
    else this.capture(first);
    const accs = this.accs;
    for (let s = 0; s < accs.length; s++) accs[s]!.reset();
    this.errors = null;
    this.errorArg = null;
  }

  aggregate(slot: number): Accumulator {
    const err = this.errors?.[slot];
    if (err) throw err;
    return this.accs[slot]!;
  }

  fold(ev: RowEval): void {
    const accs = this.accs;
    for (let s = 0; s < accs.length; s++) {
      const failed = ev.failedArg[s]!;
      if (failed < 0) {
        if (this.errors === null || this.errors[s] === null) accs[s]!.add(ev.values[s]!);
      } else this.recordError(s, failed, ev.argErrors[s]!);
    }
  }

  snapshot(): unknown {
    const errors = this.errors === null ? null : this.errors.map((e) => e?.message ?? null);
    return [this.firstRow(), this.accs.map((a) => a.snapshot()), errors, this.errorArg === null ? null : [...this.errorArg]];
  }

  /** A group as `snapshot()` saved it, with fresh accumulators of `spec` loaded. */
  static restore(s: unknown, spec: IncSpec): AccGroupRow {
    const [first, accs, errors, errorArg] = s as [Tuple | null, unknown[], (string | null)[] | null, number[] | null];
    const g = new AccGroupRow(first, spec);
    for (let i = 0; i < g.accs.length; i++) g.accs[i]!.restore(accs[i]);
    if (errors !== null) {
      g.errors = errors.map((m) => (m === null ? null : new RowError(m)));
      g.errorArg = Int32Array.from(errorArg!);
    }
    return g;
  }

  private recordError(slot: number, arg: number, e: RowError): void {
    if (this.errors === null) {
      this.errors = this.accs.map(() => null);
      this.errorArg = new Int32Array(this.accs.length);
    }
    if (this.errors[slot] === null || arg < this.errorArg![slot]!) {
      this.errors[slot] = e;
      this.errorArg![slot] = arg;
    }
  }
}

/**
 * The groups of successive windows (a pane's tables, one after the other) by key: each key's last
 * group. The group of a key that comes back is reopened rather than built: with 10,000 keys a
 * window otherwise allocates some 60,000 objects that live exactly one window — they outlive the
 * young-generation collections, so only a full collection sweeps them (W4: 6.0 → 3.4 MB promoted
 * per young collection).
 * Reuse is safe because an emission is consumed before the next row is folded: synchronously by
 * the operators after the window (core/operator.ts), or, by a node that keeps the groups across
 * event-loop turns (WHERE, HAVING, SELECT spread), under this index's loan (core/item.ts
 * Ownership), while the next window starts from a fresh index (TablePane.add).
 */
export class GroupIndex implements Loan {
  readonly kind = "loan";
  /** Nodes keeping an emission's groups past its push (spread across turns): no reuse meanwhile. */
  held = 0;
  /**
   * Groups by key, a prototype-less object rather than a Map: a key is most often a substring of
   * the input line, which a Map copies out to hash while a property lookup finds the key's atom in
   * place (bench/notes.md).
   */
  index: Record<string, AccGroupRow> = Object.create(null) as Record<string, AccGroupRow>;
  size = 0;
  private gens = 0;

  add(key: string, g: AccGroupRow): void {
    this.index[key] = g;
    this.size++;
  }

  /** Starts the index over with only `keys` → `groups` (the groups of earlier windows are let go). */
  replace(keys: readonly string[], groups: readonly AccGroupRow[]): void {
    const index = Object.create(null) as Record<string, AccGroupRow>;
    for (let i = 0; i < keys.length; i++) index[keys[i]!] = groups[i]!;
    this.index = index;
    this.size = keys.length;
  }

  nextGen(): number {
    return this.gens++;
  }
}

/** Keys no window has met lately that a pane's index may carry before it starts over. */
const STALE_KEYS = 4096;
/**
 * The first groups a window places, by which it judges whether the keys of the windows before
 * come back: fewer than a quarter of them reopened, and the index lets the earlier groups go.
 */
const PROBE = 1024;

/** One window's groups, in first-appearance order, plus what the WHERE/GROUP BY stages must report. */
export class GroupTable implements IncInfo {
  private readonly byKey: GroupIndex;
  /** This table's generation in `byKey`: a group whose `gen` differs is not in this table yet. */
  private readonly gen: number;
  /** The groups and their keys in first-appearance order. */
  private readonly list: AccGroupRow[] = [];
  private readonly keys: string[] = [];
  /** Rows that entered the window, and how many of them passed WHERE. */
  seen = 0;
  passed = 0;
  whereError: RowError | null = null;
  groupError: RowError | null = null;
  /** Timestamp of the first row that entered. */
  firstTs = 0;
  /** Groups of earlier windows this one reopened, among its first PROBE. */
  private reopened = 0;
  private readonly spec: IncSpec;

  /** `byKey`: the index of the table this one follows (see `next`), or a new one. */
  constructor(spec: IncSpec, byKey: GroupIndex = new GroupIndex()) {
    this.spec = spec;
    this.byKey = byKey;
    this.gen = byKey.nextGen();
  }

  /**
   * The table of the window after this one, once this one's emission has been consumed: it
   * reuses this table's groups for the keys that come back. The key index starts over when it
   * carries more keys than this window met (twice over, plus STALE_KEYS), so keys that stopped
   * coming do not pile up.
   */
  next(): GroupTable {
    const byKey = this.byKey;
    return new GroupTable(this.spec, byKey.size > 2 * this.list.length + STALE_KEYS ? new GroupIndex() : byKey);
  }

  /** Keys this table's index holds: its own groups and those of earlier windows kept for reuse. */
  get indexed(): number {
    return this.byKey.size;
  }

  /** Groups of this table's index are held by a reader of an earlier emission. */
  lent(): boolean {
    return this.byKey.held > 0;
  }

  add(t: Tuple, ev: RowEval): void {
    if (this.seen++ === 0) this.firstTs = t.ts;
    if (ev.whereError !== null) {
      if (this.whereError === null) this.whereError = ev.whereError;
      return;
    }
    if (!ev.passed) return;
    this.passed++;
    if (ev.keyError !== null) {
      if (this.groupError === null) this.groupError = ev.keyError;
      return;
    }
    if (this.whereError !== null || this.groupError !== null) return; // the window fails anyway
    const key = ev.key;
    let g = this.byKey.index[key];
    if (g === undefined) {
      g = new AccGroupRow(t, this.spec);
      this.byKey.add(key, g);
      this.place(key, g);
    } else if (g.gen !== this.gen) {
      g.reopen(t);
      this.place(key, g);
      if (this.list.length <= PROBE) this.reopened++;
    } else if (this.spec.ekuiper) g.rows[0] = t;
    g.fold(ev);
  }

  private place(key: string, g: AccGroupRow): void {
    g.gen = this.gen;
    this.list.push(g);
    this.keys.push(key);
    if (this.list.length === PROBE) this.probe();
  }

  /**
   * Keys that do not come back (a million devices, each met once in a while): the earlier windows'
   * groups would stay held in the index, each with its first row, until it starts over (two to
   * three windows' worth: W2-1M 1,088 → 1,658 bytes per open group, bench/group-bytes.ts). Once
   * this window has placed PROBE groups and fewer than a quarter were reopened, the index keeps
   * only this window's groups.
   */
  private probe(): void {
    const byKey = this.byKey;
    if (byKey.size > this.list.length && this.reopened * 4 < PROBE) byKey.replace(this.keys, this.list);
  }

  snapshot(): unknown {
    const groups: [string, unknown][] = [];
    for (let i = 0; i < this.list.length; i++) groups.push([this.keys[i]!, this.list[i]!.snapshot()]);
    return [groups, this.seen, this.passed, this.whereError?.message ?? null, this.groupError?.message ?? null, this.firstTs];
  }

  static restore(s: unknown, spec: IncSpec): GroupTable {
    const [groups, seen, passed, whereError, groupError, firstTs] = s as [[string, unknown][], number, number, string | null, string | null, number];
    const t = new GroupTable(spec);
    for (const [k, s] of groups) {
      const g = AccGroupRow.restore(s, spec);
      t.byKey.add(k, g);
      t.place(k, g);
    }
    t.seen = seen;
    t.passed = passed;
    t.whereError = whereError === null ? null : new RowError(whereError);
    t.groupError = groupError === null ? null : new RowError(groupError);
    t.firstTs = firstTs;
    return t;
  }

  /** The window's emission: its groups (one empty group for an ungrouped aggregate). */
  collection(range: WindowRange | null): Collection {
    const out = new Collection([], range);
    const list = this.list;
    const groups: GroupRow[] = new Array(list.length);
    const ts = range ? range.trigger : 0;
    for (let i = 0; i < list.length; i++) {
      const g = list[i]!;
      g.ts = ts;
      groups[i] = g;
    }
    if (groups.length === 0 && this.spec.dims.length === 0) {
      const empty = new AccGroupRow(null, this.spec);
      empty.ts = ts;
      groups.push(empty);
    }
    out.groups = groups;
    out.ownership = this.byKey;
    // eKuiper's inc_agg_window hands aggregated rows to a real WHERE (FilterOp filters groups).
    if (!this.spec.ekuiper) out.inc = this;
    return out;
  }
}
