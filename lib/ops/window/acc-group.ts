/**
 * The groups of incremental windows (windows §9): a group's first row — or only the columns of
 * it the rule reads — and its aggregates, kept in columns by group slot rather than in an
 * accumulator object per group and aggregate.
 */
import { RowError } from "../../errors.ts";
import type { IncrementalGroup } from "../../expr/compile-call.ts";
import { EMPTY, GroupRow, Tuple, type Row } from "../../expr/row.ts";
import type { Obj, Value } from "../../value/values.ts";
import { ObjectColumn, type AccColumn } from "../../functions/registry.ts";
import type { IncSpec } from "../../plan/window-spec.ts";
import type { RowEval } from "./row-eval.ts";

/** The rows of a group that keeps only columns of its first row (never written: frozen). */
const NO_ROWS: Row[] = Object.freeze([]) as unknown as Row[];

/**
 * The aggregates of the groups of an index (inc-groups.ts GroupIndex): one column per aggregate
 * call, a slot per group. A float64 count, sum, avg, max or min keeps its groups in arrays
 * (functions/agg-fold.ts CountColumn, NumColumn: 8 and 17 bytes a group); any other aggregate
 * keeps an accumulator object per group (ObjectColumn). W2-1M's groups held an array and three
 * objects for their three aggregates: some 210 of a group's 400 bytes (bench/group-bytes.ts).
 */
export class GroupSlots {
  readonly cols: AccColumn[];
  /** Slots given out. */
  size = 0;
  /** IncSpec.keep: the columns of its first row a group keeps; null: the whole row. */
  readonly keep: readonly string[] | null;
  /** The `ts` of the groups (the trigger of the window they were emitted for). */
  trigger = 0;
  /** The argument errors of the slots that met one: rare, so kept here rather than in a field of every group. */
  errs: Map<number, GroupErrors> | null = null;
  /** The origin of the last first row kept: shared by the groups whose rows share it. */
  origin = new Origin("", EMPTY);

  constructor(spec: IncSpec) {
    this.cols = spec.aggs.map((a) => (a.column ? a.column() : new ObjectColumn(a.accumulator)));
    this.keep = spec.keep ?? null;
  }

  /** A fresh slot. */
  alloc(): number {
    const i = this.size++;
    const cols = this.cols;
    for (let c = 0; c < cols.length; c++) cols[c]!.reset(i);
    return i;
  }

  /** The shared origin of a row from `emitter` with `meta`. */
  originOf(emitter: string, meta: Obj): Origin {
    const o = this.origin;
    return o.emitter === emitter && o.meta === meta ? o : (this.origin = new Origin(emitter, meta));
  }
}

/** The stream and metadata of a group's first row (one object for the many groups whose rows share them). */
class Origin {
  constructor(
    readonly emitter: string,
    readonly meta: Obj,
  ) {}
}
/** The origin of a group without a first row (an empty window's). */
const NO_ORIGIN = new Origin("", EMPTY);

/** What `aggregate` returns: read at once (one reader for every group). */
class SlotReader {
  col: AccColumn | null = null;
  i = 0;
  value(): Value {
    return this.col!.value(this.i);
  }
}
const READER = new SlotReader();

/** A group's first argument errors per aggregate, in (argument, row) order as the buffered path meets them. */
interface GroupErrors {
  readonly errors: (RowError | null)[];
  readonly arg: Int32Array;
}

/**
 * A group of an incremental window: the group's first row (or, in eKuiper's inc_agg_window, its
 * last) and its slot in its index's aggregate columns (GroupSlots). Read by aggregate calls
 * through `aggregate`.
 * When the rule reads only some columns of it (IncSpec.keep), the group keeps their values (with
 * the row's stream and metadata) instead of the row: W2-1M's groups read `device` only, and the
 * parsed message held per group was most of a group's bytes (bench/group-bytes.ts).
 */
export class AccGroupRow extends GroupRow implements IncrementalGroup {
  /** The columns the group's aggregates live in, and its slot there. */
  slots: GroupSlots;
  slot: number;
  /** The kept values (undefined: absent from the row): the value itself for one column, else an array. */
  private kept: Value | undefined | (Value | undefined)[] = undefined;
  private origin: Origin = NO_ORIGIN;
  /** Generation (GroupIndex.nextGen) of the table the group was last placed in. */
  gen = -1;

  constructor(first: Tuple | null, slots: GroupSlots) {
    const keep = slots.keep;
    // GroupRow sets `ts` through the accessor below, before `slots` is set: it writes nowhere.
    super(keep !== null ? NO_ROWS : first ? [first] : [], 0);
    this.slots = slots;
    this.slot = slots.alloc();
    if (keep !== null && first !== null) this.capture(first);
  }

  /** The window trigger the group was emitted for: its columns' (one for a table's groups, set once per emission). */
  override get ts(): number {
    return this.slots.trigger;
  }

  override set ts(ts: number) {
    // Set by GroupRow's constructor before the group has its columns.
    if (this.slots !== undefined) this.slots.trigger = ts;
  }

  private capture(t: Tuple): void {
    const keep = this.slots.keep!;
    const d = t.data;
    if (keep.length === 1) this.kept = d[keep[0]!];
    else {
      const kept = (this.kept ?? new Array(keep.length)) as (Value | undefined)[];
      for (let i = 0; i < keep.length; i++) kept[i] = d[keep[i]!];
      this.kept = kept;
    }
    this.origin = this.slots.originOf(t.emitter, t.meta);
  }

  /** The kept value of column `name` (undefined: absent). */
  private keptValue(name: string): Value | undefined {
    const keep = this.slots.keep!;
    if (keep.length === 1) return keep[0] === name ? (this.kept as Value | undefined) : undefined;
    const i = keep.indexOf(name);
    return i < 0 || this.kept === undefined ? undefined : (this.kept as (Value | undefined)[])[i];
  }

  /** The kept columns present in the first row, as an object (fresh at each call). */
  private keptColumns(): Obj {
    const out: Obj = {};
    const keep = this.slots.keep!;
    for (let i = 0; i < keep.length; i++) {
      const v = this.keptValue(keep[i]!);
      if (v !== undefined) out[keep[i]!] = v;
    }
    return out;
  }

  override value(name: string, stream: string | undefined): Value {
    if (this.slots.keep === null) return super.value(name, stream);
    if (stream !== undefined && stream !== this.origin.emitter) return null;
    const v = this.keptValue(name);
    return v === undefined ? null : v;
  }

  override valueFold(name: string, stream: string | undefined): Value {
    if (this.slots.keep === null) return super.valueFold(name, stream);
    return new Tuple(this.keptColumns(), null, 0, this.origin.emitter).valueFold(name, stream);
  }

  override all(stream: string | undefined): Obj {
    if (this.slots.keep === null) return super.all(stream);
    return stream !== undefined && stream !== this.origin.emitter ? {} : this.keptColumns();
  }

  override columns(stream: string | undefined): Obj {
    return this.slots.keep === null ? super.columns(stream) : this.all(stream);
  }

  override metadata(stream: string | undefined): Obj {
    if (this.slots.keep === null) return super.metadata(stream);
    return stream !== undefined && stream !== this.origin.emitter ? EMPTY : this.origin.meta;
  }

  override cached(i: number): Value | undefined {
    return this.slots.keep === null ? super.cached(i) : undefined;
  }

  /** The first row as a checkpoint keeps it: the row, or a row of the kept columns; null: none. */
  private firstRow(): Tuple | null {
    if (this.slots.keep === null) return (this.rows[0] as Tuple | undefined) ?? null;
    return this.origin === NO_ORIGIN ? null : new Tuple(this.keptColumns(), this.origin.meta, 0, this.origin.emitter);
  }

  /**
   * The group starts over for the next window with `first` as its first row: the accumulators
   * reset in place, so a key that comes back allocates nothing.
   */
  reopen(first: Tuple): void {
    if (this.slots.keep === null) this.rows[0] = first;
    else this.capture(first);
    const cols = this.slots.cols;
    for (let c = 0; c < cols.length; c++) cols[c]!.reset(this.slot);
    this.slots.errs?.delete(this.slot);
  }

  /** The group's argument errors, if it met any. */
  private get errs(): GroupErrors | null {
    return this.slots.errs?.get(this.slot) ?? null;
  }

  /** The group moves to slot `i` of `slots` (an index starting over with some of its groups). */
  moveTo(slots: GroupSlots, i: number): void {
    const from = this.slots.cols;
    const to = slots.cols;
    for (let c = 0; c < to.length; c++) to[c]!.take(i, from[c]!, this.slot);
    const errs = this.errs;
    if (errs !== null) (slots.errs ??= new Map()).set(i, errs);
    this.slots = slots;
    this.slot = i;
  }

  aggregate(slot: number): SlotReader {
    const err = this.errs?.errors[slot];
    if (err) throw err;
    READER.col = this.slots.cols[slot]!;
    READER.i = this.slot;
    return READER;
  }

  fold(ev: RowEval): void {
    const slots = this.slots;
    const cols = slots.cols;
    const i = this.slot;
    const errs = slots.errs === null ? null : this.errs;
    for (let s = 0; s < cols.length; s++) {
      const failed = ev.failedArg[s]!;
      if (failed < 0) {
        if (errs === null || errs.errors[s] === null) cols[s]!.add(i, ev.values[s]!);
      } else this.recordError(s, failed, ev.argErrors[s]!);
    }
  }

  snapshot(): unknown {
    const e = this.errs;
    const i = this.slot;
    return [this.firstRow(), this.slots.cols.map((c) => c.snapshot(i)), e === null ? null : e.errors.map((x) => x?.message ?? null), e === null ? null : [...e.arg]];
  }

  /** A group as `snapshot()` saved it, in a fresh slot of `slots`. */
  static restore(s: unknown, slots: GroupSlots): AccGroupRow {
    const [first, accs, errors, errorArg] = s as [Tuple | null, unknown[], (string | null)[] | null, number[] | null];
    const g = new AccGroupRow(first, slots);
    const cols = slots.cols;
    for (let c = 0; c < cols.length; c++) cols[c]!.restore(g.slot, accs[c]);
    if (errors !== null) (slots.errs ??= new Map()).set(g.slot, { errors: errors.map((m) => (m === null ? null : new RowError(m))), arg: Int32Array.from(errorArg!) });
    return g;
  }

  private recordError(slot: number, arg: number, e: RowError): void {
    let errs = this.errs;
    if (errs === null) {
      const n = this.slots.cols.length;
      errs = { errors: new Array<RowError | null>(n).fill(null), arg: new Int32Array(n) };
      (this.slots.errs ??= new Map()).set(this.slot, errs);
    }
    if (errs.errors[slot] === null || arg < errs.arg[slot]!) {
      errs.errors[slot] = e;
      errs.arg[slot] = arg;
    }
  }
}
