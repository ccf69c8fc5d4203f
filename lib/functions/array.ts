/** Array functions (functions.md §10); set-like ones live in array-set.ts, array_map in array-map.ts. */
import { RowError } from "../errors.ts";
import {
  fmtV,
  isObj,
  strictEqual,
  toIntSame,
  toIntStrict,
  toStrConv,
  typeValue,
  type Obj,
  type Value,
} from "../value/values.ts";
import { compareBytewise, setMember } from "./key-order.ts";
import { arity, atLeastArgs, register, type FuncDef, type Validator } from "./registry.ts";
import { SECOND_ARRAY, asArray } from "./array-common.ts";
import "./array-set.ts";
import "./array-map.ts";

/** Bound on generated arrays; beyond it fail like Go's `make` rather than exhaust memory. */
const MAX_GENERATED = 10_000_000n;
const TOO_LONG = "runtime error: makeslice: len out of range";

const twoOrThree: Validator = (args) =>
  args.length < 2 || args.length > 3
    ? `Expect two or three arguments but found ${args.length}.`
    : undefined;

function position(args: Value[], last: boolean): Value {
  const a = args[0]!;
  if (a === null) return -1n;
  const arr = asArray(a);
  const v = args[1]!;
  if (last) {
    for (let i = arr.length - 1; i >= 0; i--) if (strictEqual(arr[i]!, v)) return BigInt(i);
  } else {
    for (let i = 0; i < arr.length; i++) if (strictEqual(arr[i]!, v)) return BigInt(i);
  }
  return -1n;
}

function elementAt(args: Value[]): Value {
  const x = args[0]!;
  if (Array.isArray(x)) {
    const i = toIntStrict(args[1]!);
    const n = BigInt(x.length);
    if (i >= n || -i > n) throw new RowError("index out of range");
    return x[Number(i < 0n ? n + i : i)]!;
  }
  if (isObj(x)) {
    const k = args[1]!;
    if (typeof k !== "string") throw new RowError("second argument should be string");
    return Object.hasOwn(x, k) ? x[k]! : null;
  }
  throw new RowError("first argument should be []interface{} or map[string]interface{}");
}

function contains(args: Value[]): Value {
  const a = args[0]!;
  if (a === null) return false;
  const arr = asArray(a);
  for (let i = 0; i < arr.length; i++) if (strictEqual(arr[i]!, args[1]!)) return true;
  return false;
}

function containsAny(args: Value[]): Value {
  const a = args[0]!;
  if (a === null) return false;
  const arr = asArray(a);
  const other = asArray(args[1]!, SECOND_ARRAY);
  for (let i = 0; i < arr.length; i++) {
    for (let j = 0; j < other.length; j++) if (strictEqual(arr[i]!, other[j]!)) return true;
  }
  return false;
}

function remove(args: Value[]): Value {
  const a = args[0]!;
  if (a === null) return null;
  const arr = asArray(a);
  // eKuiper compacts the input in place; floe returns a new array (documented deviation).
  const out: Value[] = [];
  for (let i = 0; i < arr.length; i++) if (!strictEqual(arr[i]!, args[1]!)) out.push(arr[i]!);
  return out;
}

/** array_max / array_min: the first non-null element decides int, float or string mode. */
function extreme(args: Value[], max: boolean): Value {
  const arr = asArray(args[0]!);
  let best: Value = null;
  let mode: "int" | "float" | "string" | undefined;
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i]!;
    if (v === null) continue;
    if (mode === undefined) {
      if (typeof v === "bigint") mode = "int";
      else if (typeof v === "number") mode = "float";
      else if (typeof v === "string") mode = "string";
      else throw new RowError(`found invalid arg ${typeValue(v)}`);
    }
    let c: bigint | number | string;
    if (mode === "int") {
      if (typeof v !== "bigint" && !(typeof v === "number" && Number.isFinite(v))) {
        throw requires("int64", v);
      }
      c = toIntSame(v);
    } else if (mode === "float") {
      if (typeof v !== "number") throw requires("float64", v);
      c = v;
    } else {
      if (typeof v !== "string") throw requires("string", v);
      c = v;
    }
    if (best === null) best = c;
    else if (mode === "string") {
      const d = compareBytewise(c as string, best as string);
      if (max ? d > 0 : d < 0) best = c;
    } else {
      const n = c as number | bigint;
      const b = best as number | bigint;
      if (max ? n > b : n < b) best = c;
    }
  }
  return best;
}

function requires(type: string, v: Value): RowError {
  return new RowError(`requires ${type} but found ${typeValue(v)}`);
}

function repeat(args: Value[]): Value {
  const n = args[1]!;
  if (typeof n !== "bigint") throw new RowError("second argument should be int");
  if (n <= 0n) return [];
  if (n > MAX_GENERATED) throw new RowError(TOO_LONG);
  return new Array<Value>(Number(n)).fill(args[0]!);
}

const ORDINAL = ["first", "second", "third"] as const;

function sequence(args: Value[]): Value {
  for (let i = 0; i < args.length; i++) {
    if (typeof args[i] !== "bigint") throw new RowError(`${ORDINAL[i]} argument should be int`);
  }
  const start = args[0] as bigint;
  const stop = args[1] as bigint;
  let step = start < stop ? 1n : -1n;
  if (args.length === 3) {
    step = args[2] as bigint;
    if (step === 0n) throw new RowError("invalid step: should not be zero");
  }
  const n = (stop - start) / step + 1n;
  if (n <= 0n) return [];
  if (n > MAX_GENERATED) throw new RowError(TOO_LONG);
  const out = new Array<Value>(Number(n));
  for (let i = 0; i < out.length; i++) out[i] = start + BigInt(i) * step;
  return out;
}

function cardinality(args: Value[]): Value {
  const arr = asArray(args[0]!);
  let n = 0n;
  for (let i = 0; i < arr.length; i++) if (arr[i] !== null) n++;
  return n;
}

function flatten(args: Value[]): Value {
  const arr = asArray(args[0]!);
  const out: Value[] = [];
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i]!;
    if (Array.isArray(v)) for (let j = 0; j < v.length; j++) out.push(v[j]!);
    else out.push(v);
  }
  // eKuiper's empty result is a nil slice, encoded as JSON null.
  return out.length === 0 ? null : out;
}

function join(args: Value[]): Value {
  const arr = asArray(args[0]!);
  const sep = args[1]!;
  if (typeof sep !== "string") throw new RowError("second argument should be string");
  let repl = "";
  if (args.length === 3) {
    const r = args[2]!;
    if (typeof r !== "string") throw new RowError("third argument should be string");
    repl = r;
  }
  let s = "";
  let first = true;
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i]!;
    let t: string;
    if (v === null) {
      if (repl === "") continue;
      t = repl;
    } else t = toStrConv(v);
    s = first ? t : s + sep + t;
    first = false;
  }
  return s;
}

function shuffle(args: Value[]): Value {
  const out = asArray(args[0]!).slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return out;
}

/** Sorted by the `%v` texts, byte-wise [quirk]; stable where Go's sort is not. */
function sort(args: Value[]): Value {
  const arr = asArray(args[0]!, "array elements should be array");
  if (arr.length <= 1) return arr;
  const keyed = arr.map((v, i) => ({ v, k: fmtV(v), i }));
  keyed.sort((a, b) => compareBytewise(a.k, b.k) || a.i - b.i);
  const out = new Array<Value>(keyed.length);
  for (let i = 0; i < keyed.length; i++) out[i] = keyed[i]!.v;
  return out;
}

function concat(args: Value[]): Value {
  const out: Value[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === null) continue;
    const arr = asArray(a, "array elements should be array");
    for (let j = 0; j < arr.length; j++) out.push(arr[j]!);
  }
  return out.length === 0 ? null : out;
}

function kvpairsToObj(args: Value[]): Value {
  const arr = asArray(args[0]!);
  const out: Obj = {};
  for (let i = 0; i < arr.length; i++) {
    const item = arr[i]!;
    if (!isObj(item)) throw new RowError("array item should be map[string]interface{}");
    const k = Object.hasOwn(item, "key") ? item.key! : undefined;
    if (
      Object.keys(item).length !== 2 ||
      typeof k !== "string" ||
      !Object.hasOwn(item, "value")
    ) {
      throw new RowError("array item should be key-value pair");
    }
    setMember(out, k, item.value!);
  }
  return out;
}

const A1 = arity(1);
const A2 = arity(2);

const defs: FuncDef[] = [
  {
    name: "array_create",
    kind: "scalar",
    exec: (args) => {
      const out: Value[] = [];
      for (let i = 0; i < args.length; i++) if (args[i] !== null) out.push(args[i]!);
      return out.length === 0 ? null : out;
    },
  },
  { name: "array_position", kind: "scalar", validate: A2, exec: (a) => position(a, false) },
  { name: "array_last_position", kind: "scalar", validate: A2, exec: (a) => position(a, true) },
  { name: "element_at", kind: "scalar", validate: A2, policy: "N", exec: elementAt },
  { name: "array_contains", kind: "scalar", validate: A2, exec: contains },
  { name: "array_contains_any", kind: "scalar", validate: A2, exec: containsAny },
  { name: "array_remove", kind: "scalar", validate: A2, exec: remove },
  { name: "array_max", kind: "scalar", validate: A1, policy: "N", exec: (a) => extreme(a, true) },
  { name: "array_min", kind: "scalar", validate: A1, policy: "N", exec: (a) => extreme(a, false) },
  { name: "repeat", kind: "scalar", validate: A2, policy: "N", exec: repeat },
  { name: "sequence", kind: "scalar", validate: twoOrThree, policy: "N", exec: sequence },
  { name: "array_cardinality", kind: "scalar", validate: A1, policy: "Z", exec: cardinality },
  { name: "array_flatten", kind: "scalar", validate: A1, policy: "N", exec: flatten },
  { name: "array_join", kind: "scalar", validate: twoOrThree, policy: "N", exec: join },
  { name: "array_shuffle", kind: "scalar", validate: A1, policy: "N", exec: shuffle },
  { name: "array_sort", kind: "scalar", validate: A1, policy: "N", exec: sort },
  {
    name: "array_concat",
    kind: "scalar",
    validate: (args) => (args.length < 1 ? atLeastArgs(1, args.length) : undefined),
    exec: concat,
  },
  { name: "kvpair_array_to_obj", kind: "scalar", validate: A1, policy: "N", exec: kvpairsToObj },
];
register(...defs);
