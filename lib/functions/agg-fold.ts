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

/** sum / avg / max / min with eKuiper's first-valid-type paths. */
export class NumFold implements Fold {
  private readonly op: NumOp;
  private readonly total: boolean;
  private rows = 0;
  private count = 0;
  private mode = Mode.None;
  private err: RowError | null = null;
  private int = 0n;
  private float = 0;
  private str = "";

  constructor(op: NumOp) {
    this.op = op;
    this.total = op === "sum" || op === "avg";
  }

  add(args: Value[]): void {
    this.push(args[0]!);
  }

  push(v: Value): void {
    this.rows++;
    if (v === null || this.err !== null) return;
    this.count++;
    switch (this.mode) {
      case Mode.None:
        return this.first(v);
      case Mode.Int: {
        const i = sameKindInt(v);
        if (i === undefined) {
          this.err = new RowError(`requires ${this.total ? "int" : "int64"} but found ${typeValue(v)}`);
        } else if (this.total) this.int += i;
        else if (this.op === "max" ? this.int < i : this.int > i) this.int = i;
        return;
      }
      case Mode.Float:
        if (typeof v !== "number") this.err = new RowError(`requires float64 but found ${typeValue(v)}`);
        else if (this.total) this.float += v;
        else if (this.op === "max" ? this.float < v : this.float > v) this.float = v;
        return;
      case Mode.Str:
        if (typeof v !== "string") this.err = new RowError(`requires string but found ${typeValue(v)}`);
        else if (this.op === "max" ? compareUtf8(this.str, v) < 0 : compareUtf8(this.str, v) > 0) this.str = v;
        return;
    }
  }

  private first(v: Value): void {
    if (typeof v === "bigint") {
      this.mode = Mode.Int;
      this.int = v;
    } else if (typeof v === "number") {
      this.mode = Mode.Float;
      // Go sums from 0.0, so a lone -0 totals 0.
      this.float = this.total ? 0 + v : v;
    } else if (typeof v === "string" && !this.total) {
      this.mode = Mode.Str;
      this.str = v;
    } else {
      this.err = new RowError(`run ${this.op} function error: found invalid arg ${typeValue(v)}`);
    }
  }

  value(): Value {
    if (this.err !== null) throw this.err;
    if (this.rows === 0) return null;
    switch (this.mode) {
      case Mode.None:
        return null;
      case Mode.Int: {
        const i = BigInt.asIntN(64, this.int);
        return this.op === "avg" ? i / BigInt(this.count) : i;
      }
      case Mode.Float:
        return this.op === "avg" ? this.float / this.count : this.float;
      case Mode.Str:
        return this.str;
    }
  }

  snapshot(): unknown {
    return [this.rows, this.count, this.mode, this.err?.message ?? null, this.int, this.float, this.str];
  }

  restore(s: unknown): void {
    const [rows, count, mode, err, int, float, str] = s as [number, number, Mode, string | null, bigint, number, string];
    this.rows = rows;
    this.count = count;
    this.mode = mode;
    this.err = err === null ? null : new RowError(err);
    this.int = int;
    this.float = float;
    this.str = str;
  }
}
