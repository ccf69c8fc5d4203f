/**
 * The predicate index of a shared stream: the rules whose whole WHERE is `field <op> constant`
 * (op one of > >= < <= = !=, a numeric constant), grouped by (field, op), each group a sorted
 * array of thresholds. A message is classified once for all of them: one binary search per group
 * gives the range of thresholds (ranks) whose rules pass; every other rule of the group would find
 * its WHERE false without an error, so it only counts the message (SkipTarget) instead of
 * receiving it. Whatever the index cannot decide exactly (a value that is not a plain number, NaN,
 * an int64 beyond 2^53, a message of several rows) goes to every rule, which evaluates it alone —
 * so row errors are counted where they would be, with the rule's own text.
 */
import type { CmpOp } from "../expr/ops.ts";
import { getFold } from "../expr/row.ts";
import type { BoundField } from "../sql/render.ts";
import type { Expr } from "../sql/ast.ts";
import type { Obj } from "../value/values.ts";
import { DecoderOp } from "../ops/decoder.ts";
import { FilterOp } from "../ops/filter.ts";
import type { SourceNode, Topology } from "./topology.ts";

/** The shape the index holds: `field op c`, normalised with the field on the left. */
export interface IndexCond {
  readonly field: string;
  /** Case-insensitive column lookup (the rule's `ignoreCase`). */
  readonly fold: boolean;
  readonly op: CmpOp;
  /** The constant as float64 (an integer constant only within ±2^53, where that is exact). */
  readonly c: number;
}

const FLIP: Record<CmpOp, CmpOp> = { "=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<=" };

function constant(e: Expr): number | undefined {
  if (e.kind === "paren") return constant(e.expr);
  if (e.kind === "number") return Number.isNaN(e.value) ? undefined : e.value;
  if (e.kind === "integer") return e.value >= -(2n ** 53n) && e.value <= 2n ** 53n ? Number(e.value) : undefined;
  return undefined;
}

function column(e: Expr, stream: string): string | undefined {
  if (e.kind === "paren") return column(e.expr, stream);
  if (e.kind !== "field") return undefined;
  const f = e as BoundField;
  // A select alias is its expression; a reference bound to another name reads nothing.
  if (f.aliasOf || (f.bound !== undefined && f.bound !== stream)) return undefined;
  return f.name;
}

/** The index's shape of a WHERE over `stream`, or null when the rule must evaluate it alone. */
export function indexableCond(where: Expr, stream: string, fold: boolean): IndexCond | null {
  if (where.kind === "paren") return indexableCond(where.expr, stream, fold);
  if (where.kind !== "binary") return null;
  const op = where.op;
  if (op !== "=" && op !== "!=" && op !== "<" && op !== "<=" && op !== ">" && op !== ">=") return null;
  let field = column(where.left, stream);
  let c = constant(where.right);
  if (field !== undefined && c !== undefined) return { field, fold, op, c };
  field = column(where.right, stream);
  c = constant(where.left);
  if (field !== undefined && c !== undefined) return { field, fold, op: FLIP[op], c };
  return null;
}

/** What a rule lets the index do for it: count a message its WHERE rejects, as if it had evaluated it. */
export interface SkipTarget {
  /**
   * One message the WHERE rejects: counts it on the source, decoder and filter nodes at `now` and
   * answers true; false (nothing counted) while the rule must see every message itself (traced,
   * halted). One call per rejected message and rule.
   */
  skip(now: number): boolean;
}

/** One rule in the index: its group and its threshold's rank there. */
export class IndexMember {
  rank = 0;
  constructor(
    readonly group: ThresholdGroup,
    readonly c: number,
  ) {}
}

/** How a message's value relates to a group: pass inside [lo, hi), pass outside it, or deliver to all. */
const INSIDE = 0;
const OUTSIDE = 1;
const ALL = 2;

class ThresholdGroup {
  members: IndexMember[] = [];
  thresholds = new Float64Array(0);
  /** Members changed since the ranks were laid out (rebuilt at the next message, not per attach). */
  dirty = false;
  constructor(
    readonly slot: number,
    readonly field: string,
    readonly fold: boolean,
    readonly op: CmpOp,
  ) {}

  /** Ranks follow the thresholds, ascending (attach and detach only; never per message). */
  rebuild(): void {
    this.dirty = false;
    this.members.sort((a, b) => a.c - b.c);
    this.thresholds = new Float64Array(this.members.length);
    for (let i = 0; i < this.members.length; i++) {
      this.members[i]!.rank = i;
      this.thresholds[i] = this.members[i]!.c;
    }
  }

  /** Writes (mode, lo, hi) for the row's value into `cuts` at this group's slot. */
  classify(row: Obj, cuts: Int32Array): void {
    if (this.dirty) this.rebuild();
    const raw = this.fold ? getFold(row, this.field) : row[this.field];
    const o = this.slot * 3;
    const n = this.thresholds.length;
    let x: number;
    if (raw === undefined || raw === null) {
      // A comparison with null is false, without an error (sql §7): no rule of the group passes.
      cuts[o] = INSIDE;
      cuts[o + 1] = cuts[o + 2] = 0;
      return;
    }
    if (typeof raw === "number" && !Number.isNaN(raw)) x = raw;
    else if (typeof raw === "bigint" && raw >= -(2n ** 53n) && raw <= 2n ** 53n) x = Number(raw);
    else {
      // Strings, booleans, objects, NaN, huge int64s: every rule compares (or fails) alone.
      cuts[o] = ALL;
      return;
    }
    const t = this.thresholds;
    switch (this.op) {
      case ">": // c < x
        set(cuts, o, INSIDE, 0, lowerBound(t, x));
        return;
      case ">=": // c <= x
        set(cuts, o, INSIDE, 0, upperBound(t, x));
        return;
      case "<": // c > x
        set(cuts, o, INSIDE, upperBound(t, x), n);
        return;
      case "<=": // c >= x
        set(cuts, o, INSIDE, lowerBound(t, x), n);
        return;
      case "=":
        set(cuts, o, INSIDE, lowerBound(t, x), upperBound(t, x));
        return;
      case "!=":
        set(cuts, o, OUTSIDE, lowerBound(t, x), upperBound(t, x));
        return;
    }
  }
}

function set(cuts: Int32Array, o: number, mode: number, lo: number, hi: number): void {
  cuts[o] = mode;
  cuts[o + 1] = lo;
  cuts[o + 2] = hi;
}

/** The first index whose threshold is ≥ x. */
function lowerBound(t: Float64Array, x: number): number {
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index whose threshold is > x. */
function upperBound(t: Float64Array, x: number): number {
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class PredicateIndex {
  private readonly groups = new Map<string, ThresholdGroup>();
  private list: ThresholdGroup[] = [];

  get size(): number {
    let n = 0;
    for (const g of this.list) n += g.members.length;
    return n;
  }

  add(cond: IndexCond): IndexMember {
    const key = `${cond.fold ? 1 : 0}${cond.op}\u0000${cond.field}`;
    let g = this.groups.get(key);
    if (!g) {
      g = new ThresholdGroup(this.list.length, cond.field, cond.fold, cond.op);
      this.groups.set(key, g);
      this.list.push(g);
    }
    const m = new IndexMember(g, cond.c);
    g.members.push(m);
    g.dirty = true;
    return m;
  }

  remove(m: IndexMember): void {
    const g = m.group;
    const i = g.members.indexOf(m);
    if (i < 0) return;
    g.members.splice(i, 1);
    g.dirty = true;
  }

  /**
   * One message's cuts for every group (3 numbers per group), or null when the message is not
   * one row (every rule gets it). Valid until the next attach or detach.
   */
  classify(rows: Obj | readonly Obj[]): Int32Array | null {
    const row = Array.isArray(rows) ? (rows.length === 1 ? rows[0]! : undefined) : (rows as Obj);
    if (row === undefined || this.list.length === 0) return null;
    const cuts = new Int32Array(this.list.length * 3);
    for (const g of this.list) if (g.members.length > 0) g.classify(row, cuts);
    return cuts;
  }
}

/** Whether the member's rule would find its WHERE false for the message classified as `cuts`. */
export function rejects(m: IndexMember, cuts: Int32Array): boolean {
  const o = m.group.slot * 3;
  const mode = cuts[o]!;
  if (mode === ALL) return false;
  const inside = m.rank >= cuts[o + 1]! && m.rank < cuts[o + 2]!;
  return mode === INSIDE ? !inside : inside;
}

/**
 * The rule's WHERE when it is the node right after the stream's decoder (nothing else between,
 * the rule's only source), with what one message it rejects counts on the way: the source (when
 * this rule counts a shared one), the decoder and the filter. Undefined: not answerable by an index.
 */
export function rejectable(topo: Topology, stream: string): Rejectable | undefined {
  const chain = topo.chain(stream);
  if (!chain || chain.source.helpers.length > 2) return undefined;
  const dec = chain.ops[0];
  const filter = chain.ops[1];
  if (!(dec instanceof DecoderOp) || !(filter instanceof FilterOp) || filter.where === undefined) return undefined;
  return new Rejectable(filter.where, chain.source, dec, filter);
}

/** A rule's WHERE an index may answer, and the counts of one message it rejects (`rejectable`). */
export class Rejectable {
  constructor(
    readonly where: Expr,
    private readonly src: SourceNode,
    private readonly dec: DecoderOp,
    private readonly filter: FilterOp,
  ) {}

  skipped(now: number): void {
    if (this.src.counts) this.src.metrics.passed(now);
    this.dec.passed(now);
    this.filter.rejected(now);
  }
}
