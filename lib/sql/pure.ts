/**
 * A pure SELECT: no expression calls a function (clock, rule id, state, randomness, a UDF) or
 * reads meta. What it computes depends on its text and its input alone, so rules with the same
 * pure SELECT may share its AST (shared-select.ts), its plan and one evaluation per message
 * (runtime/plan-share.ts, runtime/shared-eval.ts).
 */
import type { Expr, SelectStatement } from "./ast.ts";
import { clauseExprs, some } from "./walk.ts";

/** Expression kinds a pure SELECT may hold. */
const PURE = new Set(["integer", "number", "string", "boolean", "field", "wildcard", "binary", "paren", "arrow", "index", "slice", "in", "between", "like", "case"]);

const impure = (e: Expr): boolean => !PURE.has(e.kind);

/** No expression of the SELECT calls a function or reads meta. */
export function isPureSelect(select: SelectStatement): boolean {
  for (const f of select.fields) if (some(f.expr, impure)) return false;
  for (const e of clauseExprs(select)) if (some(e, impure)) return false;
  return true;
}
