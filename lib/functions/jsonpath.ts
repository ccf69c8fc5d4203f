/**
 * JSON path functions (functions.md §9): json_path_query, json_path_query_first,
 * json_path_exists. Paths are compiled lazily on first use per call site, so a bad path is a
 * run-time error as in eKuiper.
 */
import { RowError } from "../errors.ts";
import { fmtV, isObj, type Value } from "../value/values.ts";
import { compileJsonPath, type Ev } from "./jsonpath/index.ts";
import { expectArgs, expectType, register, type CallCtx, type Validator } from "./registry.ts";

const validate: Validator = (args) => {
  if (args.length !== 2) return expectArgs(2, args.length);
  if (args[1]!.kind !== "string") return expectType("string", 2);
  return undefined;
};

/** The document a path runs on. */
function toDocument(v: Value): Value {
  if (v === null) throw new RowError("invalid data nil for jsonpath");
  if (Array.isArray(v) || isObj(v)) return v;
  if (typeof v === "string") {
    try {
      // JSON.parse yields floats for every number, as Go's json.Unmarshal into interface{}.
      return JSON.parse(v) as Value;
    } catch {
      throw new RowError(`data '${v}' is not a valid json string`);
    }
  }
  if (v instanceof Uint8Array) {
    const out = new Array<Value>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = BigInt(v[i]!);
    return out;
  }
  throw new RowError(`invalid data ${fmtV(v)} for jsonpath`);
}

/** Per call site: the last path text and its compiled form or parse error. */
interface Compiled {
  readonly text: string;
  readonly ev?: Ev;
  readonly err?: RowError;
}

function compiled(path: Value, ctx: CallCtx): Ev {
  if (typeof path !== "string") {
    throw new RowError(`invalid jsonPath, must be a string but got ${fmtV(path)}`);
  }
  let c = ctx.state as Compiled | undefined;
  if (c === undefined || c.text !== path) {
    try {
      c = { text: path, ev: compileJsonPath(path) };
    } catch (e) {
      if (!(e instanceof RowError)) throw e;
      c = { text: path, err: e };
    }
    ctx.state = c;
  }
  if (c.err) throw c.err;
  return c.ev!;
}

function query(args: Value[], ctx: CallCtx): Value {
  const doc = toDocument(args[0]!);
  return compiled(args[1]!, ctx)(null, doc);
}

function queryFirst(args: Value[], ctx: CallCtx): Value {
  const r = query(args, ctx);
  if (!Array.isArray(r)) throw new RowError(`query result (${fmtV(r)}) is not an array`);
  // An empty result crashes eKuiper (index out of range); floe yields null.
  return r.length === 0 ? null : r[0]!;
}

function exists(args: Value[], ctx: CallCtx): Value {
  let r: Value;
  try {
    r = query(args, ctx);
  } catch (e) {
    if (e instanceof RowError) return false;
    throw e;
  }
  if (r === null) return false;
  return Array.isArray(r) ? r.length > 0 : true;
}

register(
  { name: "json_path_query", kind: "scalar", validate, exec: query },
  { name: "json_path_query_first", kind: "scalar", validate, exec: queryFirst },
  { name: "json_path_exists", kind: "scalar", validate, exec: exists },
);
