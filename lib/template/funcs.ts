/**
 * Template functions: Go's text/template builtins and eKuiper's own `json`, `base64`, `prop`
 * (rules-and-sinks.md §3.2), plus the Sprig set of sprig.ts.
 */
import { fmtV, formatFloatPlain, goType, isObj, type Value } from "../value/values.ts";
import { encodeGoJson } from "../value/json-encode.ts";
import { FuncError, truth, type FuncCtx, type TemplateFunc } from "./exec.ts";
import { sprint, sprintf, sprintln } from "./printf.ts";
import { arity, SPRIG, str, strval, toJson } from "./sprig.ts";

// ---------------------------------------------------------------------------------------------
// Go comparisons (text/template funcs.go)

type Kind = "bool" | "int" | "float" | "string" | "invalid" | "other";
function basicKind(v: Value): Kind {
  if (v === null) return "invalid";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "bigint":
      return "int";
    case "number":
      return "float";
    case "string":
      return "string";
  }
  return "other";
}

function eq(args: Value[]): boolean {
  if (args.length < 2) throw new FuncError("missing argument for comparison");
  const a = args[0]!;
  const k1 = basicKind(a);
  for (let i = 1; i < args.length; i++) {
    const b = args[i]!;
    const k2 = basicKind(b);
    if (k1 !== k2) {
      if (a !== null && b !== null) throw new FuncError("incompatible types for comparison");
      continue;
    }
    if (k1 === "other") {
      if (Array.isArray(a) || isObj(a)) throw new FuncError(`non-comparable type ${fmtV(a)}: ${goType(a)}`);
    }
    if (a === b) return true;
  }
  return false;
}

function lt(a: Value, b: Value): boolean {
  const k1 = basicKind(a);
  const k2 = basicKind(b);
  if (k1 === "other" || k1 === "invalid" || k1 === "bool") throw new FuncError("invalid type for comparison");
  if (k1 !== k2) throw new FuncError("incompatible types for comparison");
  return (a as number) < (b as number);
}

function escapeHtml(s: string): string {
  return s.replace(/[&'<>"\0]/g, (c) => ({ "&": "&amp;", "'": "&#39;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "\0": "\uFFFD" })[c]!);
}

function escapeJs(s: string): string {
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === "'") out += "\\'";
    else if (ch === '"') out += '\\"';
    else if (ch === "<") out += "\\u003C";
    else if (ch === ">") out += "\\u003E";
    else if (ch === "&") out += "\\u0026";
    else if (ch === "=") out += "\\u003D";
    else if (c < 0x20) out += "\\u" + c.toString(16).toUpperCase().padStart(4, "0");
    else out += ch;
  }
  return out;
}

/** Go's builtins html/js/urlquery: one string argument as is, else `fmt.Sprint(args...)`. */
function evalArgs(args: Value[]): string {
  if (args.length === 1 && typeof args[0] === "string") return args[0];
  return sprint(args);
}

function goLen(v: Value): bigint {
  if (v === null) throw new FuncError("len of nil pointer");
  if (typeof v === "string") return BigInt(Buffer.byteLength(v));
  if (Array.isArray(v) || v instanceof Uint8Array) return BigInt(v.length);
  if (isObj(v)) return BigInt(Object.keys(v).length);
  throw new FuncError(`len of type ${goType(v)}`);
}

function goIndex(item: Value, idx: Value[]): Value {
  let v = item;
  for (const ix of idx) {
    if (v === null) throw new FuncError("index of untyped nil");
    if (Array.isArray(v) || v instanceof Uint8Array || typeof v === "string") {
      if (typeof ix !== "bigint") throw new FuncError(`cannot index slice/array with type ${goType(ix)}`);
      const n = Number(ix);
      const len = typeof v === "string" ? Buffer.byteLength(v) : v.length;
      if (n < 0 || n >= len) throw new FuncError(`index out of range: ${n}`);
      v = typeof v === "string" ? BigInt(Buffer.from(v)[n]!) : v instanceof Uint8Array ? BigInt(v[n]!) : v[n]!;
    } else if (isObj(v)) {
      if (typeof ix !== "string") throw new FuncError(`value has type ${goType(ix)}; should be string`);
      const x = v[ix];
      v = x === undefined ? null : x;
    } else throw new FuncError(`can't index item of type ${goType(v)}`);
  }
  return v;
}

function goSlice(item: Value, idx: Value[]): Value {
  const n = idx.map((x) => {
    if (typeof x !== "bigint") throw new FuncError(`cannot index slice/array with type ${goType(x)}`);
    return Number(x);
  });
  if (typeof item === "string") {
    const b = Buffer.from(item);
    const i = n[0] ?? 0;
    const j = n[1] ?? b.length;
    if (i < 0 || j < i || j > b.length) throw new FuncError(`index out of range: ${j > b.length ? j : i}`);
    return b.subarray(i, j).toString();
  }
  if (Array.isArray(item)) {
    const i = n[0] ?? 0;
    const j = n[1] ?? item.length;
    if (i < 0 || j < i || j > item.length) throw new FuncError(`index out of range: ${j > item.length ? j : i}`);
    return item.slice(i, j);
  }
  throw new FuncError(`can't slice item of type ${goType(item)}`);
}

const F: Record<string, TemplateFunc> = {
  // Go builtins
  not: (a) => (arity("not", a, 1), !truth(a[0]!)),
  len: (a) => (arity("len", a, 1), goLen(a[0]!)),
  index: (a) => goIndex(a[0] ?? null, a.slice(1)),
  slice: (a) => goSlice(a[0] ?? null, a.slice(1)),
  print: (a) => sprint(a),
  printf: (a) => sprintf(str(a[0] ?? null, 0), a.slice(1)),
  println: (a) => sprintln(a),
  eq: (a) => eq(a),
  ne: (a) => (arity("ne", a, 2), !eq(a)),
  lt: (a) => (arity("lt", a, 2), lt(a[0]!, a[1]!)),
  le: (a) => (arity("le", a, 2), lt(a[0]!, a[1]!) || eq(a)),
  gt: (a) => (arity("gt", a, 2), !(lt(a[0]!, a[1]!) || eq(a))),
  ge: (a) => (arity("ge", a, 2), !lt(a[0]!, a[1]!)),
  html: (a) => escapeHtml(evalArgs(a)),
  js: (a) => escapeJs(evalArgs(a)),
  urlquery: (a) => encodeURIComponent(evalArgs(a)).replace(/%20/g, "+").replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase()),
  call: (a) => {
    throw new FuncError(`call of nil`.replace("nil", a[0] === null ? "nil" : goType(a[0] ?? null)));
  },
  // eKuiper
  json: (a) => toJson(a[0] ?? null),
  base64: (a) => {
    const v = a[0] ?? null;
    if (v === null) throw new FuncError("based64 error for nil");
    if (typeof v === "boolean" || typeof v === "bigint" || typeof v === "number" || typeof v === "string")
      return Buffer.from(typeof v === "number" ? formatFloatPlain(v) : String(v)).toString("base64");
    if (isObj(v)) return Buffer.from(encodeGoJson(v)).toString("base64");
    throw new FuncError(`Unsupported data type ${Array.isArray(v) ? "slice" : goType(v)} for base64 function.`);
  },
  prop: (a, ctx: FuncCtx) => {
    const k = strval(a[0] ?? null);
    return ctx.props[k] ?? k;
  },
};

export const TEMPLATE_FUNCS: ReadonlyMap<string, TemplateFunc> = new Map(Object.entries({ ...F, ...SPRIG }));
