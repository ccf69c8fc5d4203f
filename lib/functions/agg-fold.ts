/**
 * The row-by-row folds behind count, sum, avg, min and max (functions.md §1.1–1.2). The buffered
 * `exec` and the incremental accumulator both run these, so they agree by construction: the
 * first non-null value picks the code path, later values must fit it, and the first misfit is
 * the error (remembered, thrown by `value()`).
 */
import { RowError } from "../errors.ts";
import { compareUtf8, floatToInt64, typeValue, type Value } from "../value/values.ts";
import type { AccColumn, Accumulator } from "./registry.ts";

/**
 * A fold over one argument's per-row values. Every fold is also the incremental accumulator of
 * its aggregate (`add` takes the row's argument values): one object per group per aggregate.
 */
export interface Fold extends Accumulator {
  push(v: Value): void;
  value(): Value;
}

/** Runs a fold over a group's values (buffered evaluation). */
export function runFold(fold: Fold, values: Value[]): Value {
  for (let i = 0; i < values.length; i++) fold.push(values[i]!);
  return fold.value();
}

/** `count(x)`: non-null values; an empty group is null (policy N) [quirk]. */
export class CountFold implements Fold {
  rows = 0;
  count = 0;
  add(args: Value[]): void {
    this.push(args[0]!);
  }
  push(v: Value): void {
    this.rows++;
    if (v !== null) this.count++;
  }
  value(): Value {
    return this.rows === 0 ? null : BigInt(this.count);
  }
  snapshot(): unknown {
    return [this.rows, this.count];
  }
  restore(s: unknown): void {
    [this.rows, this.count] = s as [number, number];
  }
  reset(): void {
    this.rows = 0;
    this.count = 0;
  }
}

/** Go `cast.ToInt64(v, CONVERT_SAMEKIND)`: ints as they are, floats truncated. */
function sameKindInt(v: Value): bigint | undefined {
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return floatToInt64(v);
  return undefined;
}

export type NumOp = "sum" | "avg" | "max" | "min";

const enum Mode {
  None,
  Int,
  Float,
  Str,
}

/** NumFold's aggregate as a number (a group holds one fold per aggregate: the smaller the better). */
const enum Kind {
  Sum,
  Avg,
  Max,
  Min,
}
const KINDS: Record<NumOp, Kind> = { sum: Kind.Sum, avg: Kind.Avg, max: Kind.Max, min: Kind.Min };
const OPS: readonly NumOp[] = ["sum", "avg", "max", "min"];

/**
 * sum / avg / max / min with eKuiper's first-valid-type paths. The running value sits in one
 * field whose type the mode tells (int: bigint, float: number, string): six fields keep the
 * object at 64 bytes, where separate int/float/string fields made it 112 (10,000 groups of W4
 * hold 20,000 of them, and the collector sizes its young generation by what stays live).
 */
export class NumFold implements Fold {
  private readonly kind: Kind;
  private rows = 0;
  private count = 0;
  private mode = Mode.None;
  private err: RowError | null = null;
  private acc: bigint | number | string = 0;

  constructor(op: NumOp) {
    this.kind = KINDS[op];
  }

  add(args: Value[]): void {
    this.push(args[0]!);
  }

  push(v: Value): void {
    this.rows++;
    if (v === null || this.err !== null) return;
    this.count++;
    const total = this.kind <= Kind.Avg;
    switch (this.mode) {
      case Mode.None:
        return this.first(v);
      case Mode.Int: {
        const i = sameKindInt(v);
        const acc = this.acc as bigint;
        if (i === undefined) {
          this.err = new RowError(`requires ${total ? "int" : "int64"} but found ${typeValue(v)}`);
        } else if (total) this.acc = acc + i;
        else if (this.kind === Kind.Max ? acc < i : acc > i) this.acc = i;
        return;
      }
      case Mode.Float: {
        const acc = this.acc as number;
        if (typeof v !== "number") this.err = new RowError(`requires float64 but found ${typeValue(v)}`);
        else if (total) this.acc = acc + v;
        else if (this.kind === Kind.Max ? acc < v : acc > v) this.acc = v;
        return;
      }
      case Mode.Str: {
        const acc = this.acc as string;
        if (typeof v !== "string") this.err = new RowError(`requires string but found ${typeValue(v)}`);
        else if (this.kind === Kind.Max ? compareUtf8(acc, v) < 0 : compareUtf8(acc, v) > 0) this.acc = v;
        return;
      }
    }
  }

  private first(v: Value): void {
    const total = this.kind <= Kind.Avg;
    if (typeof v === "bigint") {
      this.mode = Mode.Int;
      this.acc = v;
    } else if (typeof v === "number") {
      this.mode = Mode.Float;
      // Go sums from 0.0, so a lone -0 totals 0.
      this.acc = total ? 0 + v : v;
    } else if (typeof v === "string" && !total) {
      this.mode = Mode.Str;
      this.acc = v;
    } else {
      this.err = new RowError(`run ${OPS[this.kind]} function error: found invalid arg ${typeValue(v)}`);
    }
  }

  value(): Value {
    if (this.err !== null) throw this.err;
    if (this.rows === 0) return null;
    switch (this.mode) {
      case Mode.None:
        return null;
      case Mode.Int: {
        const i = BigInt.asIntN(64, this.acc as bigint);
        return this.kind === Kind.Avg ? i / BigInt(this.count) : i;
      }
      case Mode.Float:
        return this.kind === Kind.Avg ? (this.acc as number) / this.count : this.acc;
      case Mode.Str:
        return this.acc;
    }
  }

  /** As [rows, count, mode, error, int, float, string], the layout checkpoints have always had. */
  snapshot(): unknown {
    const m = this.mode;
    return [this.rows, this.count, m, this.err?.message ?? null, m === Mode.Int ? this.acc : 0n, m === Mode.Float ? this.acc : 0, m === Mode.Str ? this.acc : ""];
  }

  restore(s: unknown): void {
    const [rows, count, mode, err, int, float, str] = s as [number, number, Mode, string | null, bigint, number, string];
    this.rows = rows;
    this.count = count;
    this.mode = mode;
    this.err = err === null ? null : new RowError(err);
    this.acc = mode === Mode.Int ? int : mode === Mode.Str ? str : float;
  }

  reset(): void {
    this.rows = 0;
    this.count = 0;
    this.mode = Mode.None;
    this.err = null;
    this.acc = 0;
  }

  /** Goes on from a NumColumn slot's state (no error; `float`: on the float path with `acc`, else no value yet). */
  resumeFloat(rows: number, count: number, float: boolean, acc: number): void {
    this.rows = rows;
    this.count = count;
    this.mode = float ? Mode.Float : Mode.None;
    this.err = null;
    this.acc = float ? acc : 0;
  }
}

/**
 * Slots a column makes room for at first. Small: a hopping window of many open windows holds a
 * column set per window, most with few groups.
 */
export const FIRST_SLOTS = 4;

/** The next capacity of a column that is full at `n` slots: doubling while small, then a quarter more (less room unused). */
export function grownSlots(n: number): number {
  return Math.max(FIRST_SLOTS, n < 1024 ? n * 2 : Math.ceil(n * 1.25));
}
/** Rows per slot a column counts in its 32-bit arrays; a slot reaching it moves to an object. */
const MAX_ROWS = 0xffff_fffe;

function grown<T extends Uint32Array | Float64Array | Uint8Array>(a: T, need: number, make: (n: number) => T): T {
  if (need < a.length) return a;
  const b = make(Math.max(need + 1, grownSlots(a.length)));
  b.set(a);
  return b;
}

/** `count(x)` over many groups: [rows, count] per slot in two 32-bit arrays (8 bytes a group). */
export class CountColumn implements AccColumn {
  private rows = new Uint32Array(0);
  private count = new Uint32Array(0);
  /** Slots past MAX_ROWS rows: an object each. */
  private big: Map<number, CountFold> | null = null;

  reset(i: number): void {
    if (i >= this.rows.length) {
      this.rows = grown(this.rows, i, (n) => new Uint32Array(n));
      this.count = grown(this.count, i, (n) => new Uint32Array(n));
    }
    this.rows[i] = 0;
    this.count[i] = 0;
    this.big?.delete(i);
  }
  add(i: number, args: Value[]): void {
    const big = this.big?.get(i);
    if (big !== undefined) return big.push(args[0]!);
    const r = this.rows[i]!;
    if (r === MAX_ROWS) return this.spill(i).push(args[0]!);
    this.rows[i] = r + 1;
    if (args[0] !== null) this.count[i]!++;
  }
  private spill(i: number): CountFold {
    const f = new CountFold();
    f.restore([this.rows[i], this.count[i]]);
    (this.big ??= new Map()).set(i, f);
    return f;
  }
  value(i: number): Value {
    const big = this.big?.get(i);
    if (big !== undefined) return big.value();
    return this.rows[i] === 0 ? null : BigInt(this.count[i]!);
  }
  snapshot(i: number): unknown {
    return this.big?.get(i)?.snapshot() ?? [this.rows[i], this.count[i]];
  }
  restore(i: number, s: unknown): void {
    const [rows, count] = s as [number, number];
    if (rows < MAX_ROWS) {
      this.rows[i] = rows;
      this.count[i] = count;
    } else {
      const f = new CountFold();
      f.restore(s);
      (this.big ??= new Map()).set(i, f);
    }
  }
  take(i: number, src: AccColumn, from: number): void {
    const c = src as CountColumn;
    this.reset(i);
    const big = c.big?.get(from);
    if (big !== undefined) {
      (this.big ??= new Map()).set(i, big);
      c.big!.delete(from);
    }
    else {
      this.rows[i] = c.rows[from]!;
      this.count[i] = c.count[from]!;
    }
  }
}

/** NumColumn's mode of a slot whose state lives in a NumFold (an int, string or error path). */
const OBJECT = 255;

/**
 * sum / avg / max / min over many groups: the float path — every non-null value a float64, as a
 * JSON payload's numbers are — in arrays by slot (mode, rows, count, running value: 17 bytes a
 * group, where a NumFold is a 64-byte object); a slot that meets anything else (an int64, a
 * string, a misfit: an error) moves to a NumFold fed what it had, which decides from then on.
 */
export class NumColumn implements AccColumn {
  private readonly kind: Kind;
  private mode = new Uint8Array(0);
  private rows = new Uint32Array(0);
  private count = new Uint32Array(0);
  private acc = new Float64Array(0);
  /**
   * The slots' NumFolds (mode OBJECT), by slot; made at the first slot that needs one. An array,
   * not a Map: in a replay an integral value is an int64, and most slots then live here. A slot
   * reset keeps its fold for the next time it needs one (a key that comes back allocates nothing).
   */
  private folds: (NumFold | undefined)[] | null = null;

  constructor(private readonly op: NumOp) {
    this.kind = KINDS[op];
  }

  reset(i: number): void {
    if (i >= this.mode.length) {
      this.mode = grown(this.mode, i, (n) => new Uint8Array(n));
      this.rows = grown(this.rows, i, (n) => new Uint32Array(n));
      this.count = grown(this.count, i, (n) => new Uint32Array(n));
      this.acc = grown(this.acc, i, (n) => new Float64Array(n));
    }
    this.mode[i] = Mode.None;
    this.rows[i] = 0;
    this.count[i] = 0;
    this.acc[i] = 0;
  }

  add(i: number, args: Value[]): void {
    const v = args[0]!;
    const m = this.mode[i]!;
    if (m === OBJECT) return this.folds![i]!.push(v);
    const r = this.rows[i]!;
    if (r === MAX_ROWS) return this.spill(i).push(v);
    if (v === null) {
      this.rows[i] = r + 1;
      return;
    }
    if (typeof v !== "number") return this.spill(i).push(v);
    this.rows[i] = r + 1;
    this.count[i]!++;
    if (m === Mode.None) {
      this.mode[i] = Mode.Float;
      // Go sums from 0.0, so a lone -0 totals 0.
      this.acc[i] = this.kind <= Kind.Avg ? 0 + v : v;
      return;
    }
    const acc = this.acc[i]!;
    if (this.kind <= Kind.Avg) this.acc[i] = acc + v;
    else if (this.kind === Kind.Max ? acc < v : acc > v) this.acc[i] = v;
  }

  /** The slot's state as NumFold's snapshot (on the float path: no error, no int, no string). */
  private state(i: number): unknown[] {
    const m = this.mode[i]!;
    return [this.rows[i], this.count[i], m, null, 0n, m === Mode.Float ? this.acc[i] : 0, ""];
  }

  private spill(i: number): NumFold {
    const f = this.folds?.[i] ?? new NumFold(this.op);
    const m = this.mode[i]!;
    f.resumeFloat(this.rows[i]!, this.count[i]!, m === Mode.Float, this.acc[i]!);
    this.setFold(i, f);
    return f;
  }

  value(i: number): Value {
    const m = this.mode[i]!;
    if (m === OBJECT) return this.folds![i]!.value();
    if (this.rows[i] === 0 || m === Mode.None) return null;
    return this.kind === Kind.Avg ? this.acc[i]! / this.count[i]! : this.acc[i]!;
  }

  snapshot(i: number): unknown {
    return this.mode[i] === OBJECT ? this.folds![i]!.snapshot() : this.state(i);
  }

  restore(i: number, s: unknown): void {
    const f = this.folds?.[i] ?? new NumFold(this.op);
    f.restore(s);
    this.setFold(i, f);
  }

  private setFold(i: number, f: NumFold): void {
    let folds = this.folds;
    // Filled with undefined up to the columns' length: an array without holes stays dense.
    if (folds === null) folds = this.folds = new Array<NumFold | undefined>(this.mode.length).fill(undefined);
    else if (folds.length < this.mode.length) for (let k = folds.length; k < this.mode.length; k++) folds.push(undefined);
    folds[i] = f;
    this.mode[i] = OBJECT;
  }

  take(i: number, src: AccColumn, from: number): void {
    const c = src as NumColumn;
    this.reset(i);
    const m = c.mode[from]!;
    this.mode[i] = m;
    if (m === OBJECT) {
      this.setFold(i, c.folds![from]!);
      // The fold is this slot's now: the source slot gets its own if it needs one again.
      c.folds![from] = undefined;
      c.mode[from] = Mode.None;
    } else {
      this.rows[i] = c.rows[from]!;
      this.count[i] = c.count[from]!;
      this.acc[i] = c.acc[from]!;
    }
  }
}
