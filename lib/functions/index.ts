/** Loads every built-in function; `createFunctionRegistry()` makes the function registry an engine or a pipe run owns. */
import "./math.ts";
import "./string.ts";
import "./hash.ts";
import "./array.ts";
import "./object.ts";
import "./jsonpath.ts";
import "./datetime.ts";
import "./convert.ts";
import "./misc.ts";
import "./analytic.ts";
import "./agg.ts";
import "./special.ts";

export * from "./registry.ts";
export { invoke, policyResult, callFailure } from "./invoke.ts";

import { FunctionRegistry } from "./registry.ts";

/** A fresh registry: every built-in, no plugin functions yet. */
export function createFunctionRegistry(): FunctionRegistry {
  return new FunctionRegistry();
}
