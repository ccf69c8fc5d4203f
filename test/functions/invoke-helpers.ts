/** Test helpers: call a registered function the way the engine does, and build validator args. */
import { RowError } from "../../lib/errors.ts";
import { invoke, lookupBuiltin, type FuncDef } from "../../lib/functions/index.ts";
import type { Value } from "../../lib/value/values.ts";
import type { Expr, TimeUnit } from "../../lib/sql/ast.ts";
import { ctxFor } from "./env.ts";

export function def(name: string): FuncDef {
  const d = lookupBuiltin(name);
  if (!d) throw new Error(`function ${name} is not registered`);
  return d;
}

/** The result, or `{ err }` with the full message (prefix included). */
export function call(name: string, args: Value[]): Value | { err: string } {
  try {
    return invoke(def(name), args, ctxFor(name));
  } catch (e) {
    if (e instanceof RowError) return { err: e.message };
    throw e;
  }
}

/** Runs the validator on argument expressions. */
export function validate(name: string, args: Expr[]): string | undefined {
  return def(name).validate?.(args);
}

// Argument expressions for validator tables.
export const int = (v: number): Expr => ({ kind: "integer", value: BigInt(v) });
export const num = (v: number): Expr => ({ kind: "number", value: v });
export const str = (v: string): Expr => ({ kind: "string", value: v });
export const bool = (v: boolean): Expr => ({ kind: "boolean", value: v });
export const col = (name: string): Expr => ({ kind: "field", name });
export const unit = (u: TimeUnit): Expr => ({ kind: "timeUnit", unit: u });
export const cmp = (): Expr => ({ kind: "binary", op: ">", left: col("a"), right: int(1) });
export const plus = (): Expr => ({ kind: "binary", op: "+", left: col("a"), right: int(1) });
export const star = (): Expr => ({ kind: "wildcard", except: [], replace: [] });

export const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
