/**
 * One AST for every rule with the same pure SELECT text (pure.ts): thousands of equal rules hold
 * one parsed statement. The text is parsed every time (its errors and limits are checked as
 * always); an equal statement already held is returned instead of the new one. A shared AST is
 * read-only: whoever changes a statement parses its own (parse.ts `parseSelect`).
 *
 * A SELECT that calls a function is not shared: how it parses depends on the functions known
 * at the time (a UDF deleted makes it fail).
 */
import type { SelectStatement } from "./ast.ts";
import type { FunctionSignatures } from "./function-signatures.ts";
import { parseSelect } from "./parse.ts";
import { isPureSelect } from "./pure.ts";

/** The statements in use by their text; held weakly, so a statement goes with its last rule. */
const held = new Map<string, WeakRef<SelectStatement>>();

const collected = new FinalizationRegistry<string>((text) => {
  if (held.get(text)?.deref() === undefined) held.delete(text);
});

/** `parseSelect(text)`, or the equal statement another rule already holds when it is pure. */
export function parseSharedSelect(text: string, functions: FunctionSignatures): SelectStatement {
  const s = parseSelect(text, functions);
  if (!isPureSelect(s)) return s;
  const same = held.get(text)?.deref();
  if (same !== undefined) return same;
  held.set(text, new WeakRef(s));
  collected.register(s, text);
  return s;
}
