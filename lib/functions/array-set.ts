/**
 * Set-like array functions (functions.md §10.1): intersect, union, except, distinct. eKuiper
 * uses Go maps keyed by the elements, so equality is Go `==` on interface values (an int never
 * equals a float, NaN never equals itself) and array/object/bytes elements make Go panic; floe
 * returns that panic text as the function error.
 */
import { RowError } from "../errors.ts";
import { DateTime, Duration, goType, type Value } from "../value/values.ts";
import { FIRST_ARRAY, SECOND_ARRAY, asArray } from "./array-common.ts";
import { arity, register } from "./registry.ts";

/** A set with Go map-key semantics. */
class GoKeySet {
  private readonly prims = new Set<Value>();
  private readonly others = new Set<string>();

  has(v: Value): boolean {
    if (typeof v === "number" && Number.isNaN(v)) return false;
    if (typeof v === "object" && v !== null) return this.others.has(composite(v));
    return this.prims.has(v);
  }

  add(v: Value): void {
    if (typeof v === "number" && Number.isNaN(v)) return;
    if (typeof v === "object" && v !== null) this.others.add(composite(v));
    else this.prims.add(v);
  }
}

/** Key text of a hashable non-primitive (time values); throws Go's panic text otherwise. */
function composite(v: Value): string {
  if (v instanceof DateTime) return `t${v.ms}.${v.ns}.${v.zone.name}`;
  if (v instanceof Duration) return `d${v.ns}`;
  throw new RowError(`runtime error: hash of unhashable type ${goType(v)}`);
}

function setOf(arr: Value[]): GoKeySet {
  const s = new GoKeySet();
  for (let i = 0; i < arr.length; i++) s.add(arr[i]!);
  return s;
}

function intersect(args: Value[]): Value {
  const a1 = asArray(args[0]!, FIRST_ARRAY);
  const a2 = asArray(args[1]!, SECOND_ARRAY);
  const inFirst = setOf(a1);
  const seen = new GoKeySet();
  const out: Value[] = [];
  for (let i = 0; i < a2.length; i++) {
    const v = a2[i]!;
    if (inFirst.has(v) && !seen.has(v)) {
      seen.add(v);
      out.push(v);
    }
  }
  return out;
}

function optionalArray(v: Value, msg: string): Value[] {
  return v === null ? [] : asArray(v, msg);
}

function union(args: Value[]): Value {
  const a1 = optionalArray(args[0]!, FIRST_ARRAY);
  const a2 = optionalArray(args[1]!, SECOND_ARRAY);
  const seen = new GoKeySet();
  const out: Value[] = [];
  for (const arr of [a1, a2]) {
    for (let i = 0; i < arr.length; i++) {
      const v = arr[i]!;
      if (seen.has(v)) continue;
      seen.add(v);
      out.push(v);
    }
  }
  return out;
}

function except(args: Value[]): Value {
  if (args[0] === null) return null;
  const a1 = asArray(args[0]!, FIRST_ARRAY);
  const a2 = optionalArray(args[1]!, SECOND_ARRAY);
  const excluded = setOf(a2);
  const seen = new GoKeySet();
  const out: Value[] = [];
  for (let i = 0; i < a1.length; i++) {
    const v = a1[i]!;
    if (excluded.has(v) || seen.has(v)) continue;
    seen.add(v);
    out.push(v);
  }
  return out;
}

/** Later duplicates of scalar elements removed; arrays, objects and others always kept. */
function distinct(args: Value[]): Value {
  const arr = asArray(args[0]!);
  const seen = new Set<Value>();
  const out: Value[] = [];
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i]!;
    const scalar =
      v === null || typeof v === "bigint" || typeof v === "string" || typeof v === "boolean" ||
      (typeof v === "number" && !Number.isNaN(v));
    if (scalar) {
      if (seen.has(v)) continue;
      seen.add(v);
    }
    out.push(v);
  }
  return out;
}

const A1 = arity(1);
const A2 = arity(2);
register(
  { name: "array_intersect", kind: "scalar", validate: A2, policy: "N", exec: intersect },
  { name: "array_union", kind: "scalar", validate: A2, exec: union },
  { name: "array_except", kind: "scalar", validate: A2, exec: except },
  { name: "array_distinct", kind: "scalar", validate: A1, policy: "N", exec: distinct },
);
