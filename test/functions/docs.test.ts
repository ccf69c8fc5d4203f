/** Every built-in function is documented for `/metadata/functions`, with a group eKuiper documents. */
import { expect, test } from "bun:test";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { FUNCTION_DOCS, FUNCTION_GROUP_PAGES } from "../../lib/functions/docs.ts";

const functions = createFunctionRegistry();

test("every registered built-in has a hint, a known group and well-formed arguments", () => {
  const builtins = functions.names().filter((n) => !functions.lookup(n)!.plugin);
  expect(builtins.filter((n) => !FUNCTION_DOCS[n])).toEqual([]);
  for (const n of builtins) {
    const d = FUNCTION_DOCS[n]!;
    expect(d.hint.length).toBeGreaterThan(5);
    expect(FUNCTION_GROUP_PAGES[d.group]).toBeDefined();
    for (const a of d.args) expect(a).toMatch(/^(…|[A-Za-z_][A-Za-z_0-9]*\??)$/);
  }
});
