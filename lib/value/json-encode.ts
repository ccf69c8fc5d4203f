/**
 * Go `encoding/json` output (sql.md §0.5): the engine's sink encoder and `to_json`. Keys sorted by
 * byte order, HTML characters escaped as Go does, floats in Go's shortest form, ints exact,
 * bytes as base64, datetimes as RFC 3339 with trimmed nanoseconds, durations as integer ns.
 */
import { RowError } from "../errors.ts";
import { compareUtf8, type Value } from "./values.ts";
import { DateTime, Duration, formatRfc3339Nano } from "./time.ts";
import { encodeBase64 } from "./go-base64.ts";

/** Encodes `v`; NaN/±Inf anywhere throw RowError `json: unsupported value: NaN` (Go's text). */
export function encodeGoJson(v: Value): string {
  // A flat row, alone or as a one-row list (a sink's result of one row): first the texts of the rows held (below).
  let row: Record<string, Value> | null = null;
  if (typeof v === "object" && v !== null) {
    if (Array.isArray(v)) {
      if (v.length === 1) {
        const r = v[0];
        if (typeof r === "object" && r !== null && (r as { constructor?: unknown }).constructor === Object) row = r as Record<string, Value>;
      }
    } else if ((v as { constructor?: unknown }).constructor === Object) row = v as Record<string, Value>;
  }
  if (row === null) return encodeValue(v);
  const list = row !== v;
  if (holding) {
    const h = heldEqual(row);
    if (h !== null) {
      memoCredit = MEMO_CREDIT;
      return list ? "[" + h.text + "]" : h.text;
    }
  }
  // A one-row list is "[" + its row + "]" (enc's array case).
  const text = list ? enc(row, false) : encodeValue(row);
  // Rows are held while holding them pays (a hit lately), else one in MEMO_PROBE: a rule alone,
  // whose rows all differ, pays a walk per MEMO_PROBE rows, not several per row.
  if (memoCredit > 0) {
    memoCredit--;
    remember(row, text);
  } else if ((++memoProbes & (MEMO_PROBE - 1)) === 0) remember(row, text);
  else holding = false;
  return list ? "[" + text + "]" : text;
}

/**
 * One flat row encodeGoJson encoded, by value: its keys in own order, its values (strings,
 * numbers, booleans, null, bigints) and its text. A row equal to it (the same keys in the same
 * order, each value the same: Object.is, so -0 is not 0) has the same text. Held by value in
 * reused arrays, since a row may change after it was encoded: nothing is allocated per row.
 */
class HeldRow {
  readonly keys: string[] = [];
  readonly vals: (Value | undefined)[] = [];
  /** -1: nothing held. */
  len = -1;
  text = "";
}

/**
 * The last few flat rows encoded. The rules of a shared stream encode equal rows one after
 * another, each rule its own object, under a few projections: the first of each encodes, the
 * others compare. Replaced round-robin.
 */
const HELD = 4;
const held: HeldRow[] = Array.from({ length: HELD }, () => new HeldRow());
let heldNext = 0;
/** Whether rows are compared with the held ones (off while holding does not pay). */
let holding = false;
/** Misses during which rows are still held after the last hit. */
const MEMO_CREDIT = 64;
/** Without hits, one row in this many is held (a power of two). */
const MEMO_PROBE = 16;
let memoCredit = 0;
let memoProbes = 0;

function heldEqual(row: Record<string, Value>): HeldRow | null {
  for (let s = 0; s < HELD; s++) {
    const h = held[s]!;
    const n = h.len;
    if (n < 0) continue;
    const keys = h.keys;
    const vals = h.vals;
    let i = 0;
    let same = true;
    for (const k in row) {
      if (i === n || k !== keys[i] || !Object.is(row[k], vals[i])) {
        same = false;
        break;
      }
      i++;
    }
    if (same && i === n) return h;
  }
  return null;
}

function remember(row: Record<string, Value>, text: string): void {
  const h = held[heldNext]!;
  const keys = h.keys;
  const vals = h.vals;
  // Overwritten in place: the slot holds nothing until the whole row is in.
  h.len = -1;
  let i = 0;
  for (const k in row) {
    const x = row[k];
    // Not flat: nested values are not compared; nothing is held.
    if (x !== null && typeof x === "object") return;
    keys[i] = k;
    vals[i] = x;
    i++;
  }
  // What a longer row left behind is let go of.
  if (vals.length > i) {
    keys.length = i;
    vals.length = i;
  }
  h.len = i;
  h.text = text;
  heldNext = (heldNext + 1) % HELD;
  holding = true;
}

function encodeValue(v: Value): string {
  // A sink's rows share a shape: the last top-level plain object's keys, checked without a key array.
  const sh = lastShape;
  if (sh !== null && typeof v === "object" && v !== null && (v as { constructor?: unknown }).constructor === Object) {
    const kind = shapeKind(v as Record<string, Value>, sh.own);
    if (kind !== OTHER_SHAPE) return encShape(v as Record<string, Value>, sh, kind);
  }
  return enc(v, true);
}

/** `top`: v is encodeGoJson's argument (a row), whose shape is remembered. */
function enc(v: Value | undefined, top: boolean): string {
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "string":
      return goJsonString(v);
    case "number":
      return goJsonFloat(v);
    case "bigint": {
      // BigInt#toString is several times slower than number formatting in JSC.
      const n = Number(v);
      return Number.isSafeInteger(n) ? "" + n : v.toString();
    }
    case "boolean":
      return v ? "true" : "false";
  }
  if (Array.isArray(v)) {
    const n = v.length;
    if (n === 0) return "[]";
    let s = "[" + enc(v[0], false);
    for (let i = 1; i < n; i++) s += "," + enc(v[i], false);
    return s + "]";
  }
  if (v instanceof Uint8Array) return '"' + encodeBase64(v) + '"';
  if (v instanceof DateTime) return '"' + formatRfc3339Nano(v) + '"';
  if (v instanceof Duration) return v.ns.toString();
  const own = Object.keys(v);
  const n = own.length;
  if (n === 0) return "{}";
  const keys = isSorted(own) ? own : sortedKeys(own);
  if (top) return encShape(v, (lastShape = shapeOf(own, keys)), keys === own ? flatKind(v, keys) : NOT_FLAT);
  if (keys === own) {
    const native = nativeFlat(v, keys, flatKind(v, keys), null);
    if (native !== undefined) return native;
  }
  let s = "{" + keyPrefix(keys[0]!) + enc(v[keys[0]!], false);
  for (let i = 1; i < n; i++) {
    const k = keys[i]!;
    s += "," + keyPrefix(k) + enc(v[k], false);
  }
  return s + "}";
}

/**
 * An object's keys in own order, in byte order, and the encoded `{"key":` / `,"key":` before each value;
 * `scratch` is the shape's reused copy for withSafeInts.
 */
interface Shape {
  readonly own: string[];
  readonly keys: string[];
  readonly prefixes: string[];
  readonly scratch: Record<string, Value>;
}

let lastShape: Shape | null = null;
/** The last few top-level shapes (rows with an omitted null alternate between two or more). */
const SHAPE_TABLE = 8;
const shapeTable: Shape[] = [];
let shapeTableNext = 0;

function shapeOf(own: string[], keys: string[]): Shape {
  const n = own.length;
  for (let s = 0; s < shapeTable.length; s++) {
    const c = shapeTable[s]!;
    if (c.own.length !== n) continue;
    let i = 0;
    while (i < n && c.own[i] === own[i]) i++;
    if (i === n) return c;
  }
  const prefixes = new Array<string>(n);
  for (let i = 0; i < n; i++) prefixes[i] = (i ? "," : "{") + keyPrefix(keys[i]!);
  const sh: Shape = { own, keys, prefixes, scratch: {} };
  shapeTable[shapeTableNext] = sh;
  shapeTableNext = (shapeTableNext + 1) % SHAPE_TABLE;
  return sh;
}

/**
 * OTHER_SHAPE unless `v`'s own enumerable keys are `own`, in that order; else `v`'s flatKind. One
 * for-in walk: it allocates nothing (unlike Object.keys), and JSC reads `v[k]` inside it through the
 * walk's cached layout. Values are plain objects, whose prototypes add no enumerable key.
 */
function shapeKind(v: Record<string, Value>, own: string[]): number {
  const n = own.length;
  let i = 0;
  let kind = FLAT;
  for (const k in v) {
    if (i === n || k !== own[i]) return OTHER_SHAPE;
    i++;
    if (kind !== NOT_FLAT) kind = valueKind(v[k], kind);
  }
  return i === n ? kind : OTHER_SHAPE;
}

function encShape(v: Record<string, Value>, sh: Shape, kind: number): string {
  const keys = sh.keys;
  if (keys === sh.own) {
    const native = nativeFlat(v, keys, kind, sh.scratch);
    if (native !== undefined) return native;
  }
  const prefixes = sh.prefixes;
  let s = prefixes[0]! + enc(v[keys[0]!], false);
  for (let i = 1; i < keys.length; i++) s += prefixes[i]! + enc(v[keys[i]!], false);
  return s + "}";
}

/**
 * The native fast path for a flat object already in key order (`keys` is its own order): JSON.stringify
 * writes exactly what Go writes, unless a string holds a character Go escapes differently (checked on
 * the output). `scratch`: the object withSafeInts copies into (null: a new one). Undefined when the path does
 * not apply.
 */
function nativeFlat(v: Record<string, Value>, keys: string[], f: number, scratch: Record<string, Value> | null): string | undefined {
  if (f === NOT_FLAT) return undefined;
  const s = JSON.stringify(f === FLAT ? v : withSafeInts(v, keys, scratch ?? {}));
  return GO_ONLY_ESCAPES.test(s) ? undefined : s;
}

// Characters Go's encoder escapes and JSON.stringify does not (HTML-safe `<>&`, U+2028/2029) and
// lone surrogates (invalid UTF-8 to Go).
const GO_ONLY_ESCAPES = /[<>&\u2028\u2029\ud800-\udfff]/;

const NOT_FLAT = 0;
const FLAT = 1;
/** Flat but for int64 values within ±2^53, which a float64 holds exactly. */
const FLAT_SAFE_INTS = 2;
/** shapeKind: the object's keys are not the shape's. */
const OTHER_SHAPE = -1;

/**
 * FLAT when every value is a string, a boolean, null, or a finite float other than -0: JSON.stringify
 * agrees with Go. FLAT_SAFE_INTS when some values are also safe-integer bigints (JSON integers decode as int64).
 */
function flatKind(o: Record<string, Value>, keys: string[]): number {
  let kind = FLAT;
  for (let i = 0; i < keys.length && kind !== NOT_FLAT; i++) kind = valueKind(o[keys[i]!], kind);
  return kind;
}

/** The flatKind of an object holding `x` besides values of kind `kind` (FLAT or FLAT_SAFE_INTS). */
function valueKind(x: Value | undefined, kind: number): number {
  switch (typeof x) {
    case "string":
    case "boolean":
      return kind;
    case "number":
      return x !== x || x === Infinity || x === -Infinity || (x === 0 && 1 / x < 0) ? NOT_FLAT : kind;
    case "bigint": {
      // Number() rounds monotonically, so it lands within ±(2^53-1) only for an int64 that does.
      const n = Number(x);
      return n > Number.MAX_SAFE_INTEGER || n < -Number.MAX_SAFE_INTEGER ? NOT_FLAT : FLAT_SAFE_INTS;
    }
    case "object":
      return x === null ? kind : NOT_FLAT;
    default:
      return NOT_FLAT;
  }
}

/**
 * `o`'s values copied into `c` (empty, or last filled with the same keys), bigints as numbers, keys
 * in the same order: a safe integer below 1e21 prints as its digits, so JSON.stringify of `c` is Go's
 * output for `o`, and its native path (which a replacer would turn off) stays on.
 */
function withSafeInts(o: Record<string, Value>, keys: string[], c: Record<string, Value>): Record<string, Value> {
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k]!;
    const y = typeof x === "bigint" ? Number(x) : x;
    // Assigning "__proto__" would set the prototype, not a key.
    if (k === "__proto__") Object.defineProperty(c, k, { value: y, enumerable: true, writable: true, configurable: true });
    else c[k] = y;
  }
  return c;
}

// Column names repeat on every row: their encoded `"key":` is cached (bounded).
const KEY_CACHE_MAX = 4096;
const keyCache = new Map<string, string>();

function keyPrefix(k: string): string {
  let p = keyCache.get(k);
  if (p === undefined) {
    p = goJsonString(k) + ":";
    if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
    keyCache.set(k, p);
  }
  return p;
}

// The keys of the last object found in byte order: the rows of a rule share a few key orders,
// and keys from Object.keys are atoms, so comparing them by identity proves the order again.
let sortedShape: string[] = [];

function isSorted(keys: string[]): boolean {
  const n = keys.length;
  const last = sortedShape;
  if (last.length === n) {
    let i = 0;
    while (i < n && last[i] === keys[i]) i++;
    if (i === n) return true;
  }
  for (let i = 1; i < n; i++) if (compareUtf8(keys[i - 1]!, keys[i]!) > 0) return false;
  sortedShape = keys;
  return true;
}

// Rows of one rule share a few key orders: the sorted order of the last few unsorted shapes is
// remembered (keys from Object.keys are atoms, so comparing them is cheap).
const SHAPES = 8;
const shapeIn: string[][] = [];
const shapeOut: string[][] = [];
let shapeNext = 0;

function sortedKeys(keys: string[]): string[] {
  const n = keys.length;
  for (let s = 0; s < shapeIn.length; s++) {
    const c = shapeIn[s]!;
    if (c.length !== n) continue;
    let i = 0;
    while (i < n && c[i] === keys[i]) i++;
    if (i === n) return shapeOut[s]!;
  }
  const out = keys.slice();
  if (n <= 16) {
    // Insertion sort: JSC's Array#sort is slow on the short arrays rows have.
    for (let i = 1; i < n; i++) {
      const x = out[i]!;
      let j = i - 1;
      while (j >= 0 && compareUtf8(out[j]!, x) > 0) {
        out[j + 1] = out[j]!;
        j--;
      }
      out[j + 1] = x;
    }
  } else out.sort(compareUtf8);
  shapeIn[shapeNext] = keys;
  shapeOut[shapeNext] = out;
  shapeNext = (shapeNext + 1) % SHAPES;
  return out;
}

/**
 * Go's float encoding: 'f' form in [1e-6, 1e21), else 'e' with the exponent's leading zero
 * dropped — which is exactly JavaScript's `String(x)`, except that Go keeps the sign of -0.
 */
export function goJsonFloat(x: number): string {
  if (!Number.isFinite(x)) {
    throw new RowError(`json: unsupported value: ${Number.isNaN(x) ? "NaN" : x > 0 ? "+Inf" : "-Inf"}`);
  }
  if (x === 0 && Object.is(x, -0)) return "-0";
  return String(x);
}

// Everything Go escapes (controls, quote, backslash, <>&, U+2028/2029) plus surrogates, which
// need the slow path (a lone one is invalid UTF-8 to Go and becomes U+FFFD).
const NEEDS_ESCAPE = /[\u0000-\u001f"\\<>&\u2028\u2029\ud800-\udfff]/;
const HEX = "0123456789abcdef";

/** A Go JSON string literal (HTML-safe escaping, as `json.Marshal` does). */
export function goJsonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  let out = '"';
  let start = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    let rep: string | undefined;
    if (c < 0x20) {
      rep =
        c === 0x0a ? "\\n" : c === 0x0d ? "\\r" : c === 0x09 ? "\\t" : c === 0x08 ? "\\b" : c === 0x0c ? "\\f"
        : "\\u00" + HEX[c >> 4] + HEX[c & 15];
    } else if (c === 0x22) rep = '\\"';
    else if (c === 0x5c) rep = "\\\\";
    else if (c === 0x3c) rep = "\\u003c";
    else if (c === 0x3e) rep = "\\u003e";
    else if (c === 0x26) rep = "\\u0026";
    else if (c === 0x2028) rep = "\\u2028";
    else if (c === 0x2029) rep = "\\u2029";
    else if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++; // a valid pair passes through
        continue;
      }
      rep = "\ufffd";
    }
    if (rep !== undefined) {
      out += s.slice(start, i) + rep;
      start = i + 1;
    }
  }
  return out + s.slice(start) + '"';
}
