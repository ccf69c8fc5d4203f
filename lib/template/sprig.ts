/**
 * The Sprig v3 functions real eKuiper rules use (rules-and-sinks.md §3.2), with Sprig's
 * conversions (spf13/cast: failures give the zero value; integer math truncates floats [quirk]).
 */
import { createHash } from "node:crypto";
import { DateTime, fmtV, goType, isObj, type Obj, type Value } from "../value/values.ts";
import { formatGoLayout, fromUnix, localZone, loadLocation, UTC, type Zone } from "../value/time.ts";
import { compileLayout } from "../value/layout.ts";
import { parseLayout } from "../value/layout-parse.ts";
import { encodeGoJson } from "../value/json-encode.ts";
import { FuncError, truth, type TemplateFunc } from "./exec.ts";
import { goQuote } from "../value/values.ts";

// ---------------------------------------------------------------------------------------------
// Conversions (spf13/cast as Sprig uses it: failures give the zero value)

function toInt64(v: Value): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return Number.isFinite(v) ? BigInt(Math.trunc(v)) : 0n;
  if (typeof v === "boolean") return v ? 1n : 0n;
  if (typeof v === "string") {
    const t = v.trim();
    if (/^[+-]?\d+$/.test(t)) return BigInt(t);
    if (/^[+-]?0[xX][0-9a-fA-F]+$/.test(t)) return BigInt(t.replace(/^\+/, ""));
    return 0n;
  }
  return 0n;
}

function toFloat64(v: Value): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string") {
    const n = Number(v.trim());
    return v.trim() !== "" && Number.isFinite(n) ? n : 0;
  }
  return 0;
}

/** Sprig `strval`: strings as is, bytes as text, everything else `%v`. */
export function strval(v: Value): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  return fmtV(v);
}

/** Go parameter of type string: anything else is a call error. */
export function str(v: Value, i: number): string {
  if (typeof v === "string") return v;
  if (v === null) throw new FuncError(`invalid value; expected string`);
  void i;
  throw new FuncError(`wrong type for value; expected string; got ${goType(v)}`);
}

function int(v: Value): number {
  if (typeof v === "bigint") return Number(v);
  throw new FuncError(`wrong type for value; expected int; got ${goType(v)}`);
}

function list(v: Value): Value[] {
  if (Array.isArray(v)) return v;
  if (v === null) return [];
  throw new FuncError(`Cannot find first on type ${goType(v)}`);
}

export function arity(name: string, args: Value[], n: number): void {
  if (args.length !== n) throw new FuncError(`wrong number of args for ${name}: want ${n} got ${args.length}`);
}

// ---------------------------------------------------------------------------------------------
// JSON helpers

function unescapeHtml(json: string): string {
  return json.replace(/(\\*)\\u00(3c|3e|26)/g, (m, bs: string, h: string) =>
    bs.length % 2 === 1 ? m : bs + ({ "3c": "<", "3e": ">", "26": "&" } as Record<string, string>)[h]!,
  );
}

/** Go `json.MarshalIndent(v, "", "  ")` from compact Go JSON. */
function indentJson(s: string): string {
  let out = "";
  let depth = 0;
  let inStr = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (inStr) {
      out += c;
      if (c === "\\") out += s[++i];
      else if (c === '"') inStr = false;
      continue;
    }
    switch (c) {
      case '"':
        inStr = true;
        out += c;
        break;
      case "{":
      case "[":
        if (s[i + 1] === (c === "{" ? "}" : "]")) {
          out += c + s[++i];
          break;
        }
        depth++;
        out += c + "\n" + "  ".repeat(depth);
        break;
      case "}":
      case "]":
        depth--;
        out += "\n" + "  ".repeat(depth) + c;
        break;
      case ",":
        out += ",\n" + "  ".repeat(depth);
        break;
      case ":":
        out += ": ";
        break;
      default:
        out += c;
    }
  }
  return out;
}

export function toJson(v: Value): string {
  try {
    return encodeGoJson(v);
  } catch {
    return "";
  }
}

// ---------------------------------------------------------------------------------------------
// Dates (Sprig formatDate: time.Time, or int/int64/int32 unix seconds)

function toTime(v: Value, zone: Zone): DateTime {
  if (v instanceof DateTime) return new DateTime(v.ms, v.ns, zone);
  if (typeof v === "bigint") return fromUnix(Number(v), 0, zone);
  return fromUnix(Math.floor(Date.now() / 1000), 0, zone);
}

// ---------------------------------------------------------------------------------------------
// Dates (Sprig formatDate: time.Time, or int/int64/int32 unix seconds)


function round(a: Value, p: Value, r: Value = 0.5): number {
  const x = toFloat64(a);
  const places = Number(toInt64(p));
  const pow = Math.pow(10, places);
  const digit = pow * x;
  const rOpt = toFloat64(r);
  const div = digit - Math.trunc(digit);
  const rounded = div >= rOpt ? Math.ceil(digit) : Math.floor(digit);
  return rounded / pow;
}

function merge(dst: Obj, srcs: Value[]): Obj {
  for (const s of srcs) {
    if (!isObj(s)) continue;
    for (const k of Object.keys(s)) if (dst[k] === undefined || dst[k] === null) dst[k] = s[k]!;
  }
  return dst;
}

export const SPRIG: Record<string, TemplateFunc> = {
  // Sprig: JSON
  toJson: (a) => toJson(a[0] ?? null),
  toRawJson: (a) => unescapeHtml(toJson(a[0] ?? null)),
  toPrettyJson: (a) => indentJson(toJson(a[0] ?? null)),
  // Sprig: integer math (cast.ToInt64 truncates floats)
  add: (a) => a.reduce<bigint>((s, x) => s + toInt64(x), 0n),
  add1: (a) => toInt64(a[0] ?? null) + 1n,
  sub: (a) => toInt64(a[0] ?? null) - toInt64(a[1] ?? null),
  mul: (a) => a.reduce<bigint>((s, x) => s * toInt64(x), 1n),
  div: (a) => {
    const d = toInt64(a[1] ?? null);
    if (d === 0n) throw new FuncError("runtime error: integer divide by zero");
    return toInt64(a[0] ?? null) / d;
  },
  mod: (a) => {
    const d = toInt64(a[1] ?? null);
    if (d === 0n) throw new FuncError("runtime error: integer divide by zero");
    return toInt64(a[0] ?? null) % d;
  },
  max: (a) => a.map(toInt64).reduce((m, x) => (x > m ? x : m)),
  min: (a) => a.map(toInt64).reduce((m, x) => (x < m ? x : m)),
  // Sprig: float math
  addf: (a) => a.reduce<number>((s, x) => s + toFloat64(x), 0),
  add1f: (a) => toFloat64(a[0] ?? null) + 1,
  subf: (a) => a.slice(1).reduce<number>((s, x) => s - toFloat64(x), toFloat64(a[0] ?? null)),
  mulf: (a) => a.reduce<number>((s, x) => s * toFloat64(x), 1),
  divf: (a) => a.slice(1).reduce<number>((s, x) => s / toFloat64(x), toFloat64(a[0] ?? null)),
  maxf: (a) => Math.max(...a.map(toFloat64)),
  minf: (a) => Math.min(...a.map(toFloat64)),
  floor: (a) => Math.floor(toFloat64(a[0] ?? null)),
  ceil: (a) => Math.ceil(toFloat64(a[0] ?? null)),
  round: (a) => round(a[0] ?? null, a[1] ?? 0n, a[2]),
  int: (a) => toInt64(a[0] ?? null),
  int64: (a) => toInt64(a[0] ?? null),
  float64: (a) => toFloat64(a[0] ?? null),
  toString: (a: Value[]) => strval(a[0] ?? null),
  atoi: (a) => {
    const s = str(a[0] ?? null, 0);
    return /^[+-]?\d+$/.test(s) ? BigInt(s) : 0n;
  },
  // Sprig: defaults
  default: (a) => (a.length < 2 || !truth(a[1]!) ? a[0]! : a[1]!),
  empty: (a) => !truth(a[0] ?? null),
  coalesce: (a) => a.find((x) => truth(x)) ?? null,
  ternary: (a) => (a[2] === true ? a[0]! : a[1]!),
  // Sprig: strings
  upper: (a) => str(a[0] ?? null, 0).toUpperCase(),
  lower: (a) => str(a[0] ?? null, 0).toLowerCase(),
  title: (a) => str(a[0] ?? null, 0).replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_, p: string, c: string) => p + c.toUpperCase()),
  trim: (a) => str(a[0] ?? null, 0).trim(),
  trimAll: (a) => {
    const cut = [...str(a[0] ?? null, 0)];
    const s = [...str(a[1] ?? null, 1)];
    let i = 0;
    let j = s.length;
    while (i < j && cut.includes(s[i]!)) i++;
    while (j > i && cut.includes(s[j - 1]!)) j--;
    return s.slice(i, j).join("");
  },
  trimPrefix: (a) => {
    const p = str(a[0] ?? null, 0);
    const s = str(a[1] ?? null, 1);
    return s.startsWith(p) ? s.slice(p.length) : s;
  },
  trimSuffix: (a) => {
    const p = str(a[0] ?? null, 0);
    const s = str(a[1] ?? null, 1);
    return p && s.endsWith(p) ? s.slice(0, s.length - p.length) : s;
  },
  replace: (a) => str(a[2] ?? null, 2).split(str(a[0] ?? null, 0)).join(str(a[1] ?? null, 1)),
  contains: (a) => str(a[1] ?? null, 1).includes(str(a[0] ?? null, 0)),
  hasPrefix: (a) => str(a[1] ?? null, 1).startsWith(str(a[0] ?? null, 0)),
  hasSuffix: (a) => str(a[1] ?? null, 1).endsWith(str(a[0] ?? null, 0)),
  quote: (a) => a.filter((x) => x !== null).map((x) => goQuote(strval(x))).join(" "),
  squote: (a) => a.filter((x) => x !== null).map((x) => `'${strval(x)}'`).join(" "),
  cat: (a) => a.filter((x) => x !== null).map(strval).join(" "),
  substr: (a) => {
    const start = int(a[0] ?? null);
    const end = int(a[1] ?? null);
    const s = str(a[2] ?? null, 2);
    if (start < 0) return s.slice(0, end);
    if (end < 0 || end > s.length) return s.slice(start);
    return s.slice(start, end);
  },
  trunc: (a) => {
    const c = int(a[0] ?? null);
    const s = str(a[1] ?? null, 1);
    if (c < 0 && s.length + c > 0) return s.slice(s.length + c);
    if (c >= 0 && s.length > c) return s.slice(0, c);
    return s;
  },
  repeat: (a) => str(a[1] ?? null, 1).repeat(Math.max(0, int(a[0] ?? null))),
  split: (a) => {
    const out: Obj = {};
    str(a[1] ?? null, 1)
      .split(str(a[0] ?? null, 0))
      .forEach((p, i) => (out["_" + i] = p));
    return out;
  },
  splitList: (a) => str(a[1] ?? null, 1).split(str(a[0] ?? null, 0)),
  join: (a) => {
    const v = a[1] ?? null;
    const items = Array.isArray(v) ? v.filter((x) => x !== null).map(strval) : v === null ? [] : [strval(v)];
    return items.join(str(a[0] ?? null, 0));
  },
  // Sprig: lists
  list: (a) => [...a],
  first: (a) => list(a[0] ?? null)[0] ?? null,
  last: (a) => {
    const l = list(a[0] ?? null);
    return l.length ? l[l.length - 1]! : null;
  },
  rest: (a) => list(a[0] ?? null).slice(1),
  initial: (a) => list(a[0] ?? null).slice(0, -1),
  append: (a) => [...list(a[0] ?? null), a[1] ?? null],
  has: (a) => list(a[1] ?? null).some((x) => x === a[0] || (x !== null && a[0] !== null && fmtV(x) === fmtV(a[0]!) && goType(x) === goType(a[0]!))),
  uniq: (a) => {
    const out: Value[] = [];
    const seen = new Set<string>();
    for (const x of list(a[0] ?? null)) {
      const k = goType(x) + ":" + fmtV(x);
      if (!seen.has(k)) {
        seen.add(k);
        out.push(x);
      }
    }
    return out;
  },
  // Sprig: dicts
  dict: (a) => {
    const out: Obj = {};
    for (let i = 0; i < a.length; i += 2) out[strval(a[i]!)] = i + 1 < a.length ? a[i + 1]! : "";
    return out;
  },
  get: (a) => {
    const d = a[0] ?? null;
    const k = str(a[1] ?? null, 1);
    return isObj(d) && d[k] !== undefined ? d[k]! : "";
  },
  set: (a) => {
    const d = a[0] ?? null;
    if (!isObj(d)) throw new FuncError(`wrong type for value; expected map[string]interface {}; got ${goType(d)}`);
    d[str(a[1] ?? null, 1)] = a[2] ?? null;
    return d;
  },
  hasKey: (a) => {
    const d = a[0] ?? null;
    return isObj(d) && Object.prototype.hasOwnProperty.call(d, str(a[1] ?? null, 1));
  },
  // Go map order is random; floe sorts so output is deterministic.
  keys: (a) => a.flatMap((d) => (isObj(d) ? Object.keys(d) : [])).sort(),
  pluck: (a) => {
    const k = str(a[0] ?? null, 0);
    return a.slice(1).flatMap((d) => (isObj(d) && d[k] !== undefined ? [d[k]!] : []));
  },
  merge: (a) => {
    const d = a[0] ?? null;
    if (!isObj(d)) throw new FuncError(`wrong type for value; expected map[string]interface {}; got ${goType(d)}`);
    return merge(d, a.slice(1));
  },
  // Sprig: dates
  now: () => {
    const ms = Date.now();
    return new DateTime(ms, 0, localZone());
  },
  date: (a: Value[]) => formatGoLayout(toTime(a[1] ?? null, localZone()), str(a[0] ?? null, 0)),
  dateInZone: (a) => {
    let zone: Zone = UTC;
    try {
      zone = loadLocation(str(a[2] ?? null, 2));
    } catch {
      zone = UTC;
    }
    return formatGoLayout(toTime(a[1] ?? null, zone), str(a[0] ?? null, 0));
  },
  unixEpoch: (a) => {
    const t = a[0] ?? null;
    if (!(t instanceof DateTime)) throw new FuncError(`wrong type for value; expected time.Time; got ${goType(t)}`);
    return String(Math.floor(t.ms / 1000));
  },
  toDate: (a) => {
    const zone = localZone();
    const p = parseLayout(compileLayout(str(a[0] ?? null, 0)), str(a[1] ?? null, 1), zone);
    if (!p) return new DateTime(-62135596800000, 0, UTC);
    return fromUnix(p.sec, p.nsec, p.zone);
  },
  // Sprig: encodings
  b64enc: (a) => Buffer.from(str(a[0] ?? null, 0)).toString("base64"),
  b64dec: (a) => {
    const s = str(a[0] ?? null, 0);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return "illegal base64 data at input byte 0";
    return Buffer.from(s, "base64").toString();
  },
  sha256sum: (a) => createHash("sha256").update(str(a[0] ?? null, 0)).digest("hex"),
  uuidv4: () => crypto.randomUUID(),
};
