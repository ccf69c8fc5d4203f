/**
 * The compile budget's nesting limit of SQL (compile-budget.ts, `sqlDepth`): a scan of the text
 * for brackets before the parser recurses into them, and a walk of the parsed statement for the
 * nesting that needs no brackets (operator chains, CASE in CASE). Both are linear and stop at the
 * limit, so every later pass that recurses — analyzer, planner, expression compiler, rendering —
 * gets a statement it can hold.
 */
import { beyondLimit, compileLimits } from "../value/compile-budget.ts";

const WHAT = "the SQL statement nests too deeply";
const UNIT = "levels of nested expressions";

/** Throws a CompileBudgetError when brackets outside quotes nest deeper than the limit. */
export function scanSqlDepth(text: string): void {
  const max = compileLimits().sqlDepth;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123) {
      if (++depth > max) throw beyondLimit("sqlDepth", WHAT, UNIT);
    } else if (c === 41 || c === 93 || c === 125) depth--;
    else if (c === 34 || c === 39 || c === 96) {
      // A string or a quoted identifier: brackets inside are text.
      for (i++; i < text.length && text.charCodeAt(i) !== c; i++) if (text.charCodeAt(i) === 92) i++;
    }
  }
}

/** Throws a CompileBudgetError when the parsed statement's nodes (objects with a `kind`) nest deeper than the limit. */
export function checkAstDepth(ast: unknown): void {
  const max = compileLimits().sqlDepth;
  const nodes: unknown[] = [ast];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const v = nodes.pop();
    let d = depths.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (!Array.isArray(v) && typeof (v as { kind?: unknown }).kind === "string" && ++d > max) throw beyondLimit("sqlDepth", WHAT, UNIT);
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === "object" && child !== null) {
        nodes.push(child);
        depths.push(d);
      }
    }
  }
}
