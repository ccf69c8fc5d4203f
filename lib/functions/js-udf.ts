/**
 * JavaScript UDFs (rest-api.md §14.5): the script is evaluated once in its own `node:vm` context
 * and the function named by the id is called directly per row. Why vm and not `new Function` or a
 * Worker: a vm context is a separate realm with no `process`, `Bun`, `require` or `fetch` (even
 * through `Function.prototype.constructor`), which `new Function` cannot give; and a call stays
 * synchronous, which the push chain of operators needs and a Worker (message passing) cannot
 * give. Evaluation of the script is bounded by a timeout; a call is not (documented limit).
 */
import vm from "node:vm";
import { RowError } from "../errors.ts";
import { DateTime } from "../value/time.ts";
import { isObj, type Value } from "../value/values.ts";
import { registerPlugin, unregisterPlugin, type FuncDef } from "./registry.ts";

export interface ScriptDef {
  readonly id: string;
  readonly description: string;
  readonly script: string;
  readonly isAgg: boolean;
}

type JsFn = (...args: unknown[]) => unknown;

function toJs(v: Value | undefined): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return Number(v);
  if (Array.isArray(v)) return v.map(toJs);
  if (v instanceof DateTime) return v.ms;
  if (v instanceof Uint8Array) return Array.from(v);
  if (isObj(v)) {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v)) o[k] = toJs(v[k]);
    return o;
  }
  return v as unknown;
}

function fromJs(v: unknown, name: string): Value {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case "number":
      if (!Number.isFinite(v)) throw new RowError(`call func ${name} error: result is ${v}`);
      return Number.isInteger(v) && Number.isSafeInteger(v) ? BigInt(v) : v;
    case "string":
    case "boolean":
      return v;
    case "bigint":
      return v;
  }
  // Values from the script's realm: Array.isArray works across realms, instanceof does not.
  if (Array.isArray(v)) return v.map((x) => fromJs(x, name));
  if (typeof v === "object") {
    const o: Record<string, Value> = {};
    for (const k of Object.keys(v as object)) o[k] = fromJs((v as Record<string, unknown>)[k], name);
    return o;
  }
  throw new RowError(`call func ${name} error: unsupported result type ${typeof v}`);
}

/** Compiles the script; throws an Error with the script's error text (syntax, missing function). */
export function compileScript(def: ScriptDef): JsFn {
  const ctx = vm.createContext({});
  vm.runInContext(def.script, ctx, { timeout: 1000, filename: `${def.id}.js` });
  const fn = vm.runInContext(`typeof ${def.id} === "function" ? ${def.id} : undefined`, ctx, { timeout: 1000 }) as JsFn | undefined;
  if (typeof fn !== "function") throw new Error(`function ${def.id} is not defined in the script`);
  return fn;
}

/** Registers the UDF as a SQL function of plugin kind `javascript` (replacing an older version). */
export function registerScript(def: ScriptDef): void {
  const fn = compileScript(def);
  const name = def.id.toLowerCase();
  const call = (args: unknown[]): Value => {
    let r: unknown;
    try {
      r = fn(...args);
    } catch (e) {
      // Errors of the script's realm are not `instanceof Error` here.
      const msg = e !== null && typeof e === "object" && typeof (e as { message?: unknown }).message === "string" ? (e as { message: string }).message : String(e);
      throw new RowError(`call func ${def.id} error: ${msg}`);
    }
    return fromJs(r, def.id);
  };
  const fd: FuncDef & { plugin: string } = def.isAgg
    ? { name, kind: "aggregate", plugin: "javascript", exec: (args) => call(args.map(toJs)) }
    : { name, kind: "scalar", plugin: "javascript", exec: (args) => call(args.map(toJs)) };
  if (!registerPlugin(fd)) throw new Error(`function ${def.id} already exists as a built-in function`);
}

export function unregisterScript(id: string): void {
  unregisterPlugin(id);
}
