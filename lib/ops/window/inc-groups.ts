/**
 * The state of incremental windows (windows §9): a window's groups by key (acc-group.ts). A row is
 * evaluated once (row-eval.ts) and folded into each open window it belongs to; the row itself is
 * never kept, only what each group needs of its first row (its non-aggregated columns).
 */
import { RowError } from "../../errors.ts";
import type { GroupRow, Tuple, WindowRange } from "../../expr/row.ts";
import type { IncSpec } from "../../plan/window-spec.ts";
import { Collection, type IncInfo, type Loan } from "../../core/item.ts";
import { AccGroupRow, GroupSlots } from "./acc-group.ts";
import type { RowEval } from "./row-eval.ts";

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
  /** The aggregate columns of the index's groups. */
  slots: GroupSlots;

  constructor(private readonly spec: IncSpec) {
    this.slots = new GroupSlots(spec);
  }

  add(key: string, g: AccGroupRow): void {
    this.index[key] = g;
    this.size++;
  }

  /**
   * Starts the index over with only `keys` → `groups` (the groups of earlier windows are let go),
   * their aggregates moved into fresh columns.
   */
  replace(keys: readonly string[], groups: readonly AccGroupRow[]): void {
    const index = Object.create(null) as Record<string, AccGroupRow>;
    const slots = new GroupSlots(this.spec);
    for (let i = 0; i < keys.length; i++) {
      const g = groups[i]!;
      index[keys[i]!] = g;
      g.moveTo(slots, slots.alloc());
    }
    this.index = index;
    this.size = keys.length;
    this.slots = slots;
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
  constructor(spec: IncSpec, byKey: GroupIndex = new GroupIndex(spec)) {
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
    return new GroupTable(this.spec, byKey.size > 2 * this.list.length + STALE_KEYS ? new GroupIndex(this.spec) : byKey);
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
      g = new AccGroupRow(t, this.byKey.slots);
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
      const g = AccGroupRow.restore(s, t.byKey.slots);
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
    // The table is emitted once and let go: its list is the emission's groups, and their `ts` is
    // their columns' (GroupSlots.trigger, one for the table's groups). Nothing is done per group:
    // stamping each of W2-1M's 200,000 groups held the loop 3-5 ms at the window's close.
    const groups: GroupRow[] = this.list;
    const ts = range ? range.trigger : 0;
    this.byKey.slots.trigger = ts;
    if (groups.length === 0 && this.spec.dims.length === 0) {
      const empty = new AccGroupRow(null, new GroupSlots(this.spec));
      empty.slots.trigger = ts;
      groups.push(empty);
    }
    out.groups = groups;
    out.ownership = this.byKey;
    // eKuiper's inc_agg_window hands aggregated rows to a real WHERE (FilterOp filters groups).
    if (!this.spec.ekuiper) out.inc = this;
    return out;
  }
}
