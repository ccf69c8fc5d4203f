/**
 * Object functions (functions.md §11). Members are listed in ascending byte order of the keys,
 * where eKuiper's order is Go's random map order.
 */
import { RowError } from "../errors.ts";
import { fmtV, isObj, toStrConv, type Obj, type Value } from "../value/values.ts";
import { setMember, sortedKeys } from "./key-order.ts";
import { objectPick } from "./object-pick.ts";
import {
  arity,
  atLeastArgs,
  expectType,
  isBooleanish,
  isNumericLit,
  isTimeLit,
  register,
  type Validator,
} from "./registry.ts";

function asObj(v: Value, msg: string): Obj {
  if (!isObj(v)) throw new RowError(msg);
  return v;
}

const NOT_MAP = "the argument should be map[string]interface{}";

function keys(args: Value[]): Value {
  return sortedKeys(asObj(args[0]!, NOT_MAP));
}

function values(args: Value[]): Value {
  const o = asObj(args[0]!, NOT_MAP);
  const ks = sortedKeys(o);
  const out = new Array<Value>(ks.length);
  for (let i = 0; i < ks.length; i++) out[i] = o[ks[i]!]!;
  return out;
}

function items(args: Value[]): Value {
  const o = asObj(args[0]!, "first argument should be map[string]interface{}");
  const ks = sortedKeys(o);
  const out = new Array<Value>(ks.length);
  for (let i = 0; i < ks.length; i++) out[i] = [ks[i]!, o[ks[i]!]!];
  return out;
}

function toKvPairs(args: Value[]): Value {
  const x = args[0]!;
  const o = asObj(x, `the first argument should be map[string]interface{}, got ${fmtV(x)}`);
  const ks = sortedKeys(o);
  const out = new Array<Value>(ks.length);
  for (let i = 0; i < ks.length; i++) out[i] = { key: ks[i]!, value: o[ks[i]!]! };
  return out;
}

function object(args: Value[]): Value {
  const ks = args[0]!;
  const FIRST = "first argument should be []string";
  if (!Array.isArray(ks)) throw new RowError(FIRST);
  const vs = args[1]!;
  if (!Array.isArray(vs)) throw new RowError("second argument should be []interface{}");
  if (ks.length !== vs.length) throw new RowError("the length of the arguments should be same");
  // eKuiper checks the keys' element types last, while it builds the object.
  for (let i = 0; i < ks.length; i++) if (typeof ks[i] !== "string") throw new RowError(FIRST);
  const out: Obj = {};
  for (let i = 0; i < ks.length; i++) setMember(out, ks[i] as string, vs[i]!);
  return out;
}

function zip(args: Value[]): Value {
  const BAD = "each argument should be [][2]interface{}";
  const entries = args[0]!;
  if (!Array.isArray(entries)) throw new RowError(BAD);
  const out: Obj = {};
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e === null) continue;
    if (!Array.isArray(e) || e.length !== 2) throw new RowError(BAD);
    const k = e[0]!;
    if (typeof k !== "string") throw new RowError("the first element in the list item should be string");
    setMember(out, k, e[1]!);
  }
  return out;
}

function objectConcat(args: Value[]): Value {
  const out: Obj = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === null) continue;
    const o = asObj(a, `the argument should be map[string]interface{}, got ${fmtV(a)}`);
    for (const k of Object.keys(o)) setMember(out, k, o[k]!);
  }
  return out;
}

const utf8 = new TextDecoder();

function objectConstruct(args: Value[]): Value {
  const out: Obj = {};
  for (let i = 0; i + 1 < args.length; i += 2) {
    const k = args[i]!;
    if (k === null) continue;
    let key: string;
    if (typeof k === "string") key = k;
    else if (k instanceof Uint8Array) key = utf8.decode(k);
    else throw new RowError(`key ${fmtV(k)} is not a string`);
    // Null values are kept (the docs say dropped).
    setMember(out, key, args[i + 1]!);
  }
  return out;
}

function erase(args: Value[]): Value {
  if (args.length !== 2) throw new RowError(`the argument number should be 2, got ${args.length}`);
  const x = args[0]!;
  const o = asObj(x, `the first argument should be map[string]interface{}, got ${fmtV(x)}`);
  const k = args[1]!;
  const drop = new Set<string>();
  if (typeof k === "string") drop.add(k);
  else if (Array.isArray(k)) for (let i = 0; i < k.length; i++) drop.add(toStrConv(k[i]!));
  else throw new RowError("the argument should be slice or string");
  const out: Obj = {};
  for (const key of Object.keys(o)) if (!drop.has(key)) setMember(out, key, o[key]!);
  return out;
}

function objectSize(args: Value[]): Value {
  const x = args[0]!;
  if (x === null) return 0n;
  const o = asObj(x, `the first argument should be map[string]any, got ${fmtV(x)}`);
  return BigInt(Object.keys(o).length);
}

const A1 = arity(1);
const atLeast =
  (n: number): Validator =>
  (args) =>
    args.length < n ? atLeastArgs(n, args.length) : undefined;

const constructValidate: Validator = (args) => {
  if (args.length % 2 !== 0) return "the args must be key value pairs";
  for (let i = 0; i < args.length; i += 2) {
    const a = args[i]!;
    if (isNumericLit(a) || isTimeLit(a) || isBooleanish(a)) return expectType("string", i + 1);
  }
  return undefined;
};

register(
  { name: "keys", kind: "scalar", validate: A1, policy: "N", exec: keys },
  { name: "values", kind: "scalar", validate: A1, policy: "N", exec: values },
  { name: "items", kind: "scalar", validate: A1, policy: "N", exec: items },
  { name: "obj_to_kvpair_array", kind: "scalar", validate: A1, policy: "N", exec: toKvPairs },
  { name: "object", kind: "scalar", validate: arity(2), policy: "N", exec: object },
  { name: "zip", kind: "scalar", validate: A1, policy: "N", exec: zip },
  { name: "object_concat", kind: "scalar", validate: atLeast(2), exec: objectConcat },
  { name: "object_construct", kind: "scalar", validate: constructValidate, exec: objectConstruct },
  { name: "erase", kind: "scalar", validate: atLeast(2), policy: "N", exec: erase },
  { name: "object_size", kind: "scalar", validate: A1, exec: objectSize },
  { name: "object_pick", kind: "scalar", validate: atLeast(2), exec: objectPick },
);
