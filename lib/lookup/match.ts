/**
 * Key equality for lookup tables. Go compares interface values, so int64(1) and float64(1) differ
 * there; floe's decoders keep integers as int64 while JSON props and some connectors yield
 * integral floats for the same key, so numbers compare by numeric value here.
 */
import { fmtV, type Obj, type Value } from "../value/values.ts";

/** A string that equal keys share (numbers by value, strings and others by type and text). */
export function valueKey(v: Value): string {
  switch (typeof v) {
    case "bigint":
      return "n" + v.toString();
    case "number":
      return Number.isInteger(v) && Number.isSafeInteger(v) ? "n" + v : "f" + v;
    case "string":
      return "s" + v;
    case "boolean":
      return v ? "T" : "F";
  }
  return "v" + fmtV(v);
}

/** The composite key of several values (NUL cannot occur in a `valueKey` prefix). */
export function valuesKey(values: readonly Value[]): string {
  if (values.length === 1) return valueKey(values[0]!);
  let s = "";
  for (const v of values) s += valueKey(v) + "\u0000";
  return s;
}

/** True if `row[keys[i]]` equals `values[i]` for every i. */
export function rowMatches(row: Obj, keys: readonly string[], values: readonly Value[]): boolean {
  for (let i = 0; i < keys.length; i++) {
    const v = row[keys[i]!];
    if (v === undefined || v === null || valueKey(v) !== valueKey(values[i]!)) return false;
  }
  return true;
}
