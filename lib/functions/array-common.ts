/** Shared argument checks of the array functions. */
import { RowError } from "../errors.ts";
import type { Value } from "../value/values.ts";

export const FIRST_ARRAY = "first argument should be array of interface{}";
export const SECOND_ARRAY = "second argument should be array of interface{}";

/** The argument as an array, else a RowError with `msg`. */
export function asArray(v: Value, msg: string = FIRST_ARRAY): Value[] {
  if (!Array.isArray(v)) throw new RowError(msg);
  return v;
}
