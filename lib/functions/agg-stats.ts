/**
 * Statistical aggregates (functions.md §1.2): stddev, stddevs, var, vars, median,
 * percentile_cont, percentile_disc — montanaflynn/stats arithmetic as eKuiper uses it.
 */
import { RowError } from "../errors.ts";
import { fmtV, floatToInt64, typeValue, type Value } from "../value/values.ts";
import { NUMBER, register, validateArgs, type FuncDef } from "./registry.ts";

/** Go `cast.ToFloat64Slice(arr, CONVERT_SAMEKIND, IGNORE_NIL)` with eKuiper's wrapping message. */
function floats(arr: Value[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i]!;
    if (v === null) continue;
    if (typeof v === "number") out.push(v);
    else if (typeof v === "bigint") out.push(Number(v));
    else throw new RowError(`requires float64 slice but found []interface {}(${fmtV(arr)})`);
  }
  return out;
}

function mean(xs: number[]): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i]!;
  return s / xs.length;
}

/** Population (sample = 0) or sample (sample = 1) variance; n = 1 sample gives NaN [quirk]. */
function variance(xs: number[], sample: 0 | 1): number {
  const m = mean(xs);
  let v = 0;
  for (let i = 0; i < xs.length; i++) v += (xs[i]! - m) * (xs[i]! - m);
  return v / (xs.length - sample);
}

function spread(name: string, sample: 0 | 1, root: boolean): FuncDef {
  return {
    name,
    kind: "aggregate",
    validate: validateArgs(1, [NUMBER]),
    policy: "N",
    exec: (args) => {
      const xs = floats(args[0] as Value[]);
      if (xs.length === 0) return null;
      const v = variance(xs, sample);
      return root ? Math.sqrt(v) : v;
    },
  };
}

const byNumber = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);
const byBigint = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

/** The kind of the *first element* (not the first non-null) picks the path [quirk]. */
function median(args: Value[]): Value {
  const arr = args[0] as Value[];
  const first = arr[0] ?? null;
  if (typeof first === "number") {
    const xs = floats(arr).sort(byNumber);
    const l = xs.length;
    return l % 2 === 0 ? (xs[l / 2 - 1]! + xs[l / 2]!) / 2 : xs[(l - 1) / 2]!;
  }
  if (typeof first === "bigint") {
    const xs: bigint[] = [];
    for (let i = 0; i < arr.length; i++) {
      const v = arr[i]!;
      if (typeof v === "bigint") xs.push(v);
      else if (typeof v === "number") xs.push(floatToInt64(v));
      else {
        throw new RowError(
          `cannot convert []interface {}(${fmtV(arr)}) to int slice for the ${i} element: cannot convert ${typeValue(v)} to int64`,
        );
      }
    }
    xs.sort(byBigint);
    const l = xs.length;
    if (l % 2 === 1) return xs[(l - 1) / 2]!;
    return Number(BigInt.asIntN(64, xs[l / 2 - 1]! + xs[l / 2]!)) / 2;
  }
  throw new RowError(`${fmtV(first)} should be number`);
}

/** The percentile argument: first non-null of the second array, `toFloatSame`; default 1. */
function percent(arr: Value[]): number {
  if (arr.length === 0) return 1;
  let p: Value = null;
  for (let i = 0; i < arr.length && p === null; i++) p = arr[i]!;
  if (typeof p === "number") return p;
  if (typeof p === "bigint") return Number(p);
  throw new RowError(`the second parameter requires float64 but found ${typeValue(p)}`);
}

const OUT_OF_RANGE = "Input is outside of range.";

/** stats.Percentile(values, p*100). */
function percentileCont(args: Value[]): Value {
  const p = percent(args[1] as Value[]);
  const xs = floats(args[0] as Value[]);
  const n = xs.length;
  if (n === 0) return null;
  if (n === 1) return xs[0]!;
  const pct = p * 100;
  if (pct <= 0 || pct > 100) throw new RowError(`percentile exec with error: ${OUT_OF_RANGE}`);
  xs.sort(byNumber);
  const idx = (pct / 100) * n;
  if (idx === Math.trunc(idx)) return xs[idx - 1]!;
  if (idx > 1) {
    const i = Math.trunc(idx);
    return (xs[i - 1]! + xs[i]!) / 2;
  }
  throw new RowError(`percentile exec with error: ${OUT_OF_RANGE}`);
}

function percentileDisc(args: Value[]): Value {
  const p = percent(args[1] as Value[]);
  const xs = floats(args[0] as Value[]);
  const n = xs.length;
  if (n === 0) return null;
  if (p < 0 || p > 1) throw new RowError(`PopulationVariance exec with error: ${OUT_OF_RANGE}`);
  xs.sort(byNumber);
  if (p === 1) return xs[n - 1]!;
  const r = Math.ceil(n * p);
  return r === 0 ? xs[0]! : xs[r - 1]!;
}

const twoNumbers = validateArgs(2, [NUMBER, NUMBER]);

register(
  spread("stddev", 0, true),
  spread("stddevs", 1, true),
  spread("var", 0, false),
  spread("vars", 1, false),
  { name: "median", kind: "aggregate", validate: validateArgs(1, [NUMBER]), policy: "N", exec: median },
  { name: "percentile_cont", kind: "aggregate", validate: twoNumbers, policy: "N", exec: percentileCont },
  { name: "percentile_disc", kind: "aggregate", validate: twoNumbers, policy: "N", exec: percentileDisc },
);
