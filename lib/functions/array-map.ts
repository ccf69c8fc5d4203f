/** `array_map(name, arr)` (functions.md §10.2): applies a named built-in scalar to each element. */
import { RowError } from "../errors.ts";
import type { FieldRef } from "../sql/ast.ts";
import type { Value } from "../value/values.ts";
import { SECOND_ARRAY } from "./array-common.ts";
import { arity, lookupBuiltin, register, type CallCtx, type Exec } from "./registry.ts";

/** Per call site: the resolved function and the context its body runs with. */
interface Resolved {
  readonly name: string;
  readonly exec: Exec;
  readonly ctx: CallCtx;
}

const PLACEHOLDER: FieldRef = { kind: "field", name: "v" };

function resolve(name: string, ctx: CallCtx): Resolved {
  // eKuiper looks the name up case-sensitively; every built-in name is lower-case.
  const def = name === name.toLowerCase() ? lookupBuiltin(name) : undefined;
  if (!def) throw new RowError(`unknown built-in function: ${name}.`);
  // Analytic, aggregate and engine-compiled functions cannot run per element.
  if (def.kind !== "scalar" || !def.exec) {
    throw new RowError("first argument should be a scalar function.");
  }
  if (def.validate?.([PLACEHOLDER]) !== undefined) {
    throw new RowError(`validate ${name} arguments failed`);
  }
  return { name, exec: def.exec, ctx: { name, env: ctx.env, state: undefined } };
}

const arrayMap: Exec = (args, ctx) => {
  const name = args[0]!;
  if (typeof name !== "string") throw new RowError("first argument should be string");
  const arr = args[1]!;
  if (!Array.isArray(arr)) throw new RowError(SECOND_ARRAY);
  let r = ctx.state as Resolved | undefined;
  if (r === undefined || r.name !== name) {
    r = resolve(name, ctx);
    ctx.state = r;
  }
  const out = new Array<Value>(arr.length);
  try {
    // Each element goes to the body without the function's null policy.
    for (let i = 0; i < arr.length; i++) out[i] = r.exec([arr[i]!], r.ctx);
  } catch (e) {
    // An error value (ln, sqrt ...) also aborts here and gets array_map's prefix.
    if (e instanceof RowError) throw new RowError(e.message);
    throw e;
  }
  return out;
};

register({ name: "array_map", kind: "scalar", validate: arity(2), policy: "N", exec: arrayMap });
