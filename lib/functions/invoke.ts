/**
 * Running a function body the way eKuiper's call expression does (sql §7.11): the null policy
 * first, then the body, with failures prefixed by `call func <name> error: `.
 */
import { ErrorValue, RowError } from "../errors.ts";
import { isNullish, type Value } from "../value/values.ts";
import type { CallCtx, FuncDef } from "./registry.ts";

/** The value a null policy yields when one argument is null/empty, or undefined to run the body. */
export function policyResult(def: FuncDef, args: Value[]): Value | undefined {
  if (!def.policy) return undefined;
  for (let i = 0; i < args.length; i++) {
    if (isNullish(args[i]!)) return def.policy === "N" ? null : def.policy === "F" ? false : 0n;
  }
  return undefined;
}

/** Rewraps a body's failure with the call-site prefix; ErrorValue passes through unprefixed. */
export function callFailure(ctx: CallCtx, e: unknown): unknown {
  if (e instanceof ErrorValue) return new RowError(e.message);
  if (e instanceof RowError) return new RowError(`call func ${ctx.name} error: ${e.message}`);
  return e;
}

/** Applies the policy and runs the body of a scalar function. */
export function invoke(def: FuncDef, args: Value[], ctx: CallCtx): Value {
  const p = policyResult(def, args);
  if (p !== undefined) return p;
  // The one try/catch on the expression path: eKuiper names the failing call in the message.
  try {
    return def.exec!(args, ctx);
  } catch (e) {
    throw callFailure(ctx, e);
  }
}
