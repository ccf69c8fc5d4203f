/**
 * The row-by-row folds behind count, sum, avg, min and max (functions.md §1.1–1.2). The buffered
 * `exec` and the incremental accumulator both run these, so they agree by construction: the
 * first non-null value picks the code path, later values must fit it, and the first misfit is
 * the error (remembered, thrown by `value()`).
 */
import { RowError } from "../errors.ts";
import { compareUtf8, floatToInt64, typeValue, type Value } from "../value/values.ts";
import type { Accumulator } from "./registry.ts";

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
}
