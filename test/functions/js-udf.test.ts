/** JavaScript UDFs: run for real in their QuickJS sandbox, registered as plugin functions. */
import { afterAll, expect, test } from "bun:test";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { registerScript, unregisterScript } from "../../lib/functions/js-udf.ts";
import { invoke } from "../../lib/functions/invoke.ts";
import type { CallCtx } from "../../lib/functions/registry.ts";
import { UTC } from "../../lib/value/time.ts";

const functions = createFunctionRegistry();

const ctx: CallCtx = { name: "x", env: { now: () => 0, zone: UTC, ruleId: "r", ruleStart: 0 }, state: undefined };

afterAll(() => {
  for (const id of ["area", "total", "escape", "bad"]) unregisterScript(functions, id);
});

test("a scalar UDF is a SQL function of plugin kind javascript", async () => {
  await registerScript(functions, { id: "area", description: "", script: "function area(x, y) { return x * y; }", isAgg: false });
  const f = functions.lookup("area")!;
  expect([f.kind, f.plugin]).toEqual(["scalar", "javascript"]);
  expect(f.exec!([2n, 3.5], ctx)).toBe(7n);
  expect(f.exec!([1.5, 3], ctx)).toBe(4.5);
});

test("an aggregate UDF gets one array per argument", async () => {
  await registerScript(functions, { id: "total", description: "", script: "function total(xs) { return xs.reduce((a, b) => a + b, 0); }", isAgg: true });
  expect(functions.lookup("total")!.exec!([[1n, 2n, 3.5]], ctx)).toBe(6.5);
});

test("the script's realm has no process, Bun, require or fetch", async () => {
  await registerScript(functions, {
    id: "escape",
    description: "",
    script: "function escape() { return [typeof process, typeof Bun, typeof require, typeof fetch, (function(){}).constructor('return typeof process')()].join(','); }",
    isAgg: false,
  });
  expect(functions.lookup("escape")!.exec!([], ctx)).toBe("undefined,undefined,undefined,undefined,undefined");
});

test("errors: missing function, built-in names, thrown errors", async () => {
  await expect(registerScript(functions, { id: "bad", description: "", script: "function other() {}", isAgg: false })).rejects.toThrow("function bad is not defined in the script");
  await expect(registerScript(functions, { id: "abs", description: "", script: "function abs(x) { return x; }", isAgg: false })).rejects.toThrow("already exists as a built-in function");
  await registerScript(functions, { id: "bad", description: "", script: "function bad() { throw new Error('nope'); }", isAgg: false });
  expect(() => invoke(functions.lookup("bad")!, [], { ...ctx, name: "bad" })).toThrow("call func bad error: nope");
});
