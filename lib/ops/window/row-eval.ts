/**
 * One row's evaluation for an incremental window (windows §9): WHERE (when it runs after the
 * window), the GROUP BY key and every aggregate's arguments, computed once per row and folded into
 * each open window's group (acc-group.ts) the row belongs to.
 */
import { RowError } from "../../errors.ts";
import type { EvalCtx, Tuple } from "../../expr/row.ts";
import { fmtV, type Value } from "../../value/values.ts";
import type { IncSpec } from "../../plan/window-spec.ts";
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
