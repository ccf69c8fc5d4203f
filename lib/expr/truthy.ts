/** Truthiness of a condition's value (WHERE, HAVING, window FILTER), shared by operators and windows. */
import { RowError } from "../errors.ts";
import { typeValue, type Value } from "../value/values.ts";

export function nonBool(v: Value): RowError {
  return new RowError(`invalid condition that returns non-bool value ${typeValue(v)}`);
}

/** WHERE truthiness (sql §9.4): true keeps, false/null drop, anything else is an error. */
export function truthy(v: Value): boolean {
  if (v === true) return true;
  if (v === false || v === null) return false;
  throw nonBool(v);
}
