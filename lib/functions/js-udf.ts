/**
 * JavaScript UDFs (rest-api.md §14.5): each script is loaded once into its own QuickJS sandbox
 * (js-sandbox.ts: a WebAssembly instance of its own, no host objects, a time and a memory limit) and the function named
 * by the id is called per row with the SQL arguments as plain values. A call stays synchronous,
 * which the push chain of operators needs. A thrown error, a result eKuiper refuses (NaN, ±Inf)
 * or a breach of a limit is a row error, `call func <id> error: …` once the call site prefixed it.
 */
import { checkLimit, compileLimits } from "../value/compile-budget.ts";
import { RowError } from "../errors.ts";
import type { Value } from "../value/values.ts";
import type { FuncDef, FunctionRegistry } from "./registry.ts";
import { createSandbox, DEFAULT_SANDBOX_LIMITS, loadSandbox, type Sandbox, SandboxError, type SandboxLimits } from "./js-sandbox.ts";

export { DEFAULT_SANDBOX_LIMITS, loadSandbox, type SandboxLimits };

export interface ScriptDef {
  readonly id: string;
  readonly description: string;
  readonly script: string;
  readonly isAgg: boolean;
}

// Rules already running keep the function they were planned with (eKuiper: until restarted), so a
// replaced or deleted UDF's sandbox lives until its last caller is gone, then its heap is freed.
const retired = new FinalizationRegistry<Sandbox>((s) => s.dispose());

/**
 * Loads the script into a new sandbox; throws an Error with the script's error text (syntax,
 * missing function, a limit), or a CompileBudgetError for a source past the compile budget's
 * `udfBytes` (the sandbox's time limit bounds its load; the size bounds its parse).
 */
export async function compileScript(def: ScriptDef, limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Promise<Sandbox> {
  if (def.script.length * 3 > compileLimits().udfBytes) checkLimit("udfBytes", Buffer.byteLength(def.script), `the script of javascript function ${def.id}`, "bytes");
  return createSandbox(def.id, def.script, limits);
}

/** Registers the UDF in `registry` as a SQL function of plugin kind `javascript` (replacing an older version). */
export async function registerScript(registry: FunctionRegistry, def: ScriptDef, limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Promise<void> {
  const box = await compileScript(def, limits);
  const exec = registerFunction(registry, def, (args) => box.call(args));
  if (!exec) {
    box.dispose();
    throw new Error(`function ${def.id} already exists as a built-in function`);
  }
  retired.register(exec, box);
}

/**
 * Registers a UDF whose script could not be loaded at restore: it stays defined (listed, deletable,
 * plannable) and every call is a row error with the reason.
 */
export function registerBrokenScript(registry: FunctionRegistry, def: ScriptDef, reason: string): void {
  registerFunction(registry, def, () => {
    throw new SandboxError(reason, false);
  });
}

/** The registered exec, or undefined when `def.id` names a built-in. */
function registerFunction(registry: FunctionRegistry, def: ScriptDef, run: (args: readonly Value[]) => Value): ((args: readonly Value[]) => Value) | undefined {
  const name = def.id.toLowerCase();
  // The call site prefixes `call func <name> error: ` (invoke.ts), as for every function.
  const exec = (args: readonly Value[]): Value => {
    try {
      return run(args);
    } catch (e) {
      throw new RowError(e instanceof Error ? e.message : String(e));
    }
  };
  const fd: FuncDef & { plugin: string } = def.isAgg ? { name, kind: "aggregate", plugin: "javascript", exec } : { name, kind: "scalar", plugin: "javascript", exec };
  return registry.registerPlugin(fd) ? exec : undefined;
}

export function unregisterScript(registry: FunctionRegistry, id: string): void {
  registry.unregisterPlugin(id);
}
