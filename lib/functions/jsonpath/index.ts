/** JSON path (gval/jsonpath as eKuiper uses it): the compiler and the evaluator type; the SQL functions are in ../jsonpath.ts. */
export { compileJsonPath } from "./parse.ts";
export type { Ev } from "./ops.ts";
