/**
 * floe's runtime value model (sql.md §0). int64 is a JS `bigint`, float64 a JS `number`, so the
 * int/float split eKuiper relies on (integer division, `%T` in messages) survives at run time.
 * Missing fields read as `null`; evaluation failures are thrown as RowError, never returned.
 */
import { RowError } from "../errors.ts";
import { DateTime, Duration, formatGoTimeString } from "./time.ts";

export { DateTime, Duration };

export type Obj = { [key: string]: Value };
export type Value =
  | null
  | boolean
  | bigint
  | number
  | string
  | Uint8Array
  | DateTime
  | Duration
  | Value[]
  | Obj;

/** A row as it flows between operators: a plain object of column values. */
export type Row = Obj;

export const MAX_INT64 = 9223372036854775807n;
export const MIN_INT64 = -9223372036854775808n;

export function isObj(v: Value | undefined): v is Obj {
  return (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof Uint8Array) &&
    !(v instanceof DateTime) &&
    !(v instanceof Duration)
  );
}

export function isNumber(v: Value): v is bigint | number {
  return typeof v === "number" || typeof v === "bigint";
}

/** Wraps to int64 like Go's two's complement arithmetic. */
export function int64(v: bigint): bigint {
  return v > MAX_INT64 || v < MIN_INT64 ? BigInt.asIntN(64, v) : v;
}

/** Go `%T` of a value (sql §0.5.1). */
export function goType(v: Value | undefined): string {
  if (v === null || v === undefined) return "<nil>";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "bigint":
      return "int64";
    case "number":
      return "float64";
    case "string":
      return "string";
  }
  if (Array.isArray(v)) return "[]interface {}";
  if (v instanceof Uint8Array) return "[]uint8";
  if (v instanceof DateTime) return "time.Time";
  if (v instanceof Duration) return "time.Duration";
  return "map[string]interface {}";
}

/** Go `%T(%v)`, e.g. `int64(6)`, `<nil>(<nil>)`. */
export function typeValue(v: Value | undefined): string {
  return `${goType(v)}(${fmtV(v)})`;
}

// ---------------------------------------------------------------------------------------------
// Float rendering

/** Shortest round-trip digits of a finite non-zero |x|, and the decimal exponent of the first. */
function shortestDigits(x: number): { digits: string; exp: number } {
  const s = Math.abs(x).toExponential();
  const e = s.indexOf("e");
  const mant = s.slice(0, e);
  const digits = mant.length > 1 ? mant[0] + mant.slice(2) : mant;
  return { digits, exp: Number(s.slice(e + 1)) };
}

function specialFloat(x: number): string | undefined {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+Inf";
  if (x === -Infinity) return "-Inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  return undefined;
}

/** Go `strconv.FormatFloat(x, 'g', -1, 64)` = `%v` of a float64 (sql §0.3). */
export function formatFloatG(x: number): string {
  const sp = specialFloat(x);
  if (sp !== undefined) return sp;
  const { digits, exp } = shortestDigits(x);
  const sign = x < 0 ? "-" : "";
  if (exp < -4 || exp >= 6) {
    const frac = digits.length > 1 ? "." + digits.slice(1) : "";
    const ae = Math.abs(exp);
    return `${sign}${digits[0]}${frac}e${exp < 0 ? "-" : "+"}${ae < 10 ? "0" + ae : ae}`;
  }
  return sign + plainFromDigits(digits, exp);
}

function plainFromDigits(digits: string, exp: number): string {
  if (exp < 0) return "0." + "0".repeat(-exp - 1) + digits;
  if (digits.length <= exp + 1) return digits + "0".repeat(exp + 1 - digits.length);
  return digits.slice(0, exp + 1) + "." + digits.slice(exp + 1);
}

/** Go `strconv.FormatFloat(x, 'f', -1, 64)`: shortest digits, never an exponent (sql §0.4). */
export function formatFloatPlain(x: number): string {
  const sp = specialFloat(x);
  if (sp !== undefined) return sp;
  const { digits, exp } = shortestDigits(x);
  return (x < 0 ? "-" : "") + plainFromDigits(digits, exp);
}

// ---------------------------------------------------------------------------------------------
// String rendering

/** Go `%v` (sql §0.3). */
export function fmtV(v: Value | undefined): string {
  if (v === null || v === undefined) return "<nil>";
  switch (typeof v) {
    case "string":
      return v;
    case "bigint":
      return v.toString();
    case "number":
      return formatFloatG(v);
    case "boolean":
      return v ? "true" : "false";
  }
  if (Array.isArray(v)) {
    let s = "[";
    for (let i = 0; i < v.length; i++) s += (i ? " " : "") + fmtV(v[i]);
    return s + "]";
  }
  if (v instanceof Uint8Array) return "[" + Array.prototype.join.call(v, " ") + "]";
  if (v instanceof DateTime) return formatGoTimeString(v);
  if (v instanceof Duration) return v.toString();
  const keys = Object.keys(v).sort();
  let s = "map[";
  for (let i = 0; i < keys.length; i++) s += (i ? " " : "") + keys[i] + ":" + fmtV(v[keys[i]!]);
  return s + "]";
}

/** Go `strconv.Quote` (`%q`): escapes, `\x..` for other control bytes, `\u` for non-printables. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += "\\" + ch;
    else if (c === 7) out += "\\a";
    else if (c === 8) out += "\\b";
    else if (c === 12) out += "\\f";
    else if (c === 10) out += "\\n";
    else if (c === 13) out += "\\r";
    else if (c === 9) out += "\\t";
    else if (c === 11) out += "\\v";
    else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
    else if ((c >= 0x80 && c < 0xa0) || c === 0xad || c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0xfffd) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += ch;
  }
  return out + '"';
}

/** `toStringAlways`: `%v`, but null is the empty string. */
export function toStr(v: Value | undefined): string {
  return v === null || v === undefined ? "" : typeof v === "string" ? v : fmtV(v);
}

/** eKuiper `cast.ToString(x, CONVERT_ALL)` (sql §0.4). */
export function toStrConv(v: Value): string {
  if (v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number") return formatFloatPlain(v);
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  return fmtV(v);
}

// ---------------------------------------------------------------------------------------------
// Conversions (functions.md §0.6). Failures throw RowError with eKuiper's text.

function cannot(v: Value, to: string): RowError {
  return new RowError(`cannot convert ${typeValue(v)} to ${to}`);
}

/** int → int; integral float → int; else `cannot convert <T>(<v>) to int`. */
export function toIntStrict(v: Value): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v);
  throw cannot(v, "int");
}

/** int → int; float → truncated toward zero. */
export function toIntSame(v: Value): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isFinite(v)) return floatToInt64(v);
  throw cannot(v, "int");
}

/** Go's `int64(f)` on amd64: truncation, out-of-range gives MinInt64. */
export function floatToInt64(f: number): bigint {
  if (!Number.isFinite(f) || f >= 9223372036854775807 || f < -9223372036854775808) return MIN_INT64;
  return BigInt(Math.trunc(f));
}

/** `toIntSame` plus strings (Go ParseInt base 0), bools and null (0). */
export function toIntAll(v: Value): bigint {
  if (v === null) return 0n;
  if (typeof v === "boolean") return v ? 1n : 0n;
  if (typeof v === "string") {
    const n = parseGoInt(v);
    if (n === undefined) throw cannot(v, "int");
    return n;
  }
  return toIntSame(v);
}

/** float → float; int → float; else `cannot convert <T>(<v>) to float64`. */
export function toFloatSame(v: Value): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  throw cannot(v, "float64");
}

/** `toFloatSame` plus strings (Go ParseFloat), bools and null (0). */
export function toFloatAll(v: Value): number {
  if (v === null) return 0;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string") {
    const f = parseGoFloat(v);
    if (f === undefined) throw cannot(v, "float64");
    return f;
  }
  return toFloatSame(v);
}

const TRUE_WORDS = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE_WORDS = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** Go `strconv.ParseBool`; undefined when the text is not a boolean. */
export function parseGoBool(s: string): boolean | undefined {
  if (TRUE_WORDS.has(s)) return true;
  if (FALSE_WORDS.has(s)) return false;
  return undefined;
}

/** bool; number ≠ 0; string via ParseBool; null → false. */
export function toBoolAll(v: Value): boolean {
  if (v === null) return false;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "bigint") return v !== 0n;
  if (typeof v === "string") {
    const b = parseGoBool(v);
    if (b === undefined) throw new RowError(`strconv.ParseBool: parsing "${v}": invalid syntax`);
    return b;
  }
  throw cannot(v, "bool");
}

const DIGITS_RE: Record<number, RegExp> = {
  2: /^[01]+$/,
  8: /^[0-7]+$/,
  10: /^[0-9]+$/,
  16: /^[0-9a-fA-F]+$/,
};

/** Go `strconv.ParseInt(s, 0, 64)`: sign, 0x/0o/0b/leading-0 octal, `_` digit separators. */
export function parseGoInt(s: string): bigint | undefined {
  let i = 0;
  let neg = false;
  if (s[0] === "+" || s[0] === "-") {
    neg = s[0] === "-";
    i = 1;
  }
  let body = s.slice(i);
  let base = 10;
  if (body.length > 1 && body[0] === "0") {
    const p = body[1]!.toLowerCase();
    if (p === "x") (base = 16), (body = body.slice(2));
    else if (p === "o") (base = 8), (body = body.slice(2));
    else if (p === "b") (base = 2), (body = body.slice(2));
    else (base = 8), (body = body.slice(1));
  }
  if (body.includes("_")) {
    if (!goUnderscoreOK(s)) return undefined;
    body = body.replace(/_/g, "");
  }
  if (!body || !DIGITS_RE[base]!.test(body)) return undefined;
  const prefix = base === 16 ? "0x" : base === 8 ? "0o" : base === 2 ? "0b" : "";
  const n = BigInt(prefix + body) * (neg ? -1n : 1n);
  if (n > MAX_INT64 || n < MIN_INT64) return undefined;
  return n;
}

/** Go `strconv.underscoreOK`: each `_` sits between digits, or between a base prefix and a digit. */
function goUnderscoreOK(s: string): boolean {
  let saw = "^";
  let i = 0;
  if (s[0] === "-" || s[0] === "+") s = s.slice(1);
  let hex = false;
  const p = s[1]?.toLowerCase();
  if (s.length >= 2 && s[0] === "0" && (p === "b" || p === "o" || p === "x")) {
    i = 2;
    saw = "0";
    hex = p === "x";
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= "0" && c <= "9") || (hex && /[a-fA-F]/.test(c))) saw = "0";
    else if (c === "_") {
      if (saw !== "0") return false;
      saw = "_";
    } else {
      if (saw === "_") return false;
      saw = "!";
    }
  }
  return saw !== "_";
}

const FLOAT_RE = /^[+-]?(?:(?:\d(?:_?\d)*)?\.?(?:\d(?:_?\d)*)?(?:[eE][+-]?\d(?:_?\d)*)?)$/;
const HEX_FLOAT_RE = /^([+-]?)0[xX]([0-9a-fA-F_]*)\.?([0-9a-fA-F_]*)[pP]([+-]?\d+)$/;

/** Go `strconv.ParseFloat(s, 64)`: decimal and hex forms, inf/nan words, `_` separators. */
export function parseGoFloat(s: string): number | undefined {
  const lower = s.toLowerCase();
  const unsigned = lower.replace(/^[+-]/, "");
  if (unsigned === "inf" || unsigned === "infinity") return lower[0] === "-" ? -Infinity : Infinity;
  if (unsigned === "nan") return NaN;
  const hex = HEX_FLOAT_RE.exec(s);
  if (hex) {
    const int = hex[2]!.replace(/_/g, "");
    const frac = hex[3]!.replace(/_/g, "");
    if (!int && !frac) return undefined;
    let m = 0;
    for (const c of int + frac) m = m * 16 + parseInt(c, 16);
    const v = m * Math.pow(2, Number(hex[4]) - 4 * frac.length);
    return hex[1] === "-" ? -v : v;
  }
  if (!FLOAT_RE.test(s) || !/\d/.test(s)) return undefined;
  if (/^[+-]?\./.test(s) && /^[+-]?\.[eE]/.test(s)) return undefined;
  const v = Number(s.replace(/_/g, ""));
  return Number.isNaN(v) ? undefined : v;
}

// ---------------------------------------------------------------------------------------------
// Equality

/** Strict deep equality (functions §10.0): same kinds, an int never equals a float. */
export function strictEqual(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== typeof b) return false;
  if (typeof a !== "object") return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!strictEqual(a[i]!, b[i]!)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (a instanceof Uint8Array) {
    if (!(b instanceof Uint8Array) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  if (a instanceof DateTime) return b instanceof DateTime && a.ms === b.ms && a.ns === b.ns;
  if (a instanceof Duration) return b instanceof Duration && a.ns === b.ns;
  if (!isObj(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!(k in b) || !strictEqual(a[k]!, (b as Obj)[k]!)) return false;
  return true;
}

/** True for null, an empty array or an empty object: the trigger of null policies (functions §0.2). */
export function isNullish(v: Value): boolean {
  if (v === null) return true;
  if (typeof v !== "object") return false;
  if (Array.isArray(v)) return v.length === 0;
  if (isObj(v)) {
    for (const _ in v) return false;
    return true;
  }
  return false;
}

/**
 * Go's string order (byte-wise on UTF-8) for JS strings: UTF-16 order except that surrogate
 * pairs (code points ≥ U+10000) sort after U+E000..U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}
