/**
 * What the parser needs to know about functions, passed in by its caller: whether a name is a
 * function and of which kind, and the function's parse-time argument check. The function registry
 * (functions/registry.ts) implements it; the daemon's engine and each pipe run own one.
 */
import type { Expr } from "./ast.ts";

export interface FunctionSignatures {
  /** The kind of the function (`scalar`, `aggregate`, `srf`, `window` …), or undefined when there is none by that name. */
  kind(name: string): string | undefined;
  /** The validator's message for these argument expressions, or undefined when they are acceptable. */
  validate(name: string, args: readonly Expr[]): string | undefined;
}
