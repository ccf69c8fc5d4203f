/** Registers every built-in function; import this module once before looking names up. */
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
