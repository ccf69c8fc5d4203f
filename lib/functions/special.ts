/**
 * Functions whose bodies the engine supplies (functions §5, §14): metadata access, window
 * ranges, set-returning functions, changed_cols and row_number. Registered here for name
 * resolution, kind and parse-time validation.
 */
import type { Expr } from "../sql/ast.ts";
import {
  arity,
  expectArgs,
  expectType,
  isBooleanish,
  isNumericLit,
  isStringLit,
  isTimeLit,
  register,
  type Validator,
} from "./registry.ts";

function isMetaRef(e: Expr): boolean {
  return e.kind === "meta" || (e.kind === "arrow" && isMetaRef(e.left));
}

const metaValidator: Validator = (args) => {
  if (args.length !== 1) return expectArgs(1, args.length);
  return isMetaRef(args[0]!) ? undefined : expectType("meta reference", 1);
};

const mqttValidator: Validator = (args) => {
  if (args.length !== 1) return expectArgs(1, args.length);
  const a = args[0]!;
  if (a.kind !== "meta") return expectType("meta reference", 1);
  const key = a.name.toLowerCase();
  if (key !== "topic" && key !== "messageid") return "Parameter of mqtt function can be only topic or messageid.";
  return undefined;
};

const changedColsValidator: Validator = (args) => {
  if (args.length <= 2) return `expect more than two args but got ${args.length}`;
  const [prefix, ignoreNull] = args as [Expr, Expr];
  if (isNumericLit(prefix) || isTimeLit(prefix) || isBooleanish(prefix)) return expectType("string", 1);
  if (isNumericLit(ignoreNull) || isTimeLit(ignoreNull) || isStringLit(ignoreNull)) return expectType("bool", 2);
  return undefined;
};

register(
  { name: "meta", kind: "special", validate: metaValidator },
  { name: "mqtt", kind: "special", validate: mqttValidator, policy: "N" },
  { name: "window_start", kind: "special", validate: arity(0) },
  { name: "window_end", kind: "special", validate: arity(0) },
  { name: "window_trigger", kind: "special", validate: arity(0) },
  { name: "event_time", kind: "special", validate: arity(0) },
  { name: "unnest", kind: "srf", validate: arity(1), policy: "N", exec: ([v]) => v! },
  { name: "extract", kind: "srf", validate: arity(1), policy: "N" },
  { name: "changed_cols", kind: "multi", validate: changedColsValidator },
  { name: "row_number", kind: "window", validate: arity(0) },
);
