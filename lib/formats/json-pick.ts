/**
 * A member-selective JSON decoder for pipe-mode lines: scans one JSON object and builds
 * only the top-level members the rule reads (the planner's column set), validating and skipping
 * the others without building them. The values it builds are what `decodeTupleJson` gives for the
 * same members (pipe-mode.md: an integer literal is int64 — bigint, exact beyond 2^53, a float
 * beyond int64's range — every other number is float64); nested members go through
 * `decodeTupleJson` on their slice.
 *
 * It answers `undefined` whenever the line is anything but the plain case — invalid JSON, a key
 * with an escape, nesting near the depth limit, a top-level value that is not an object, an
 * envelope whose `data` is not an object — and the caller takes the full path, which gives
 * today's value or today's error. Only valid lines are answered here, so the error texts are the
 * full decoder's by construction.
 */
import type { Obj, Value } from "../value/values.ts";
import { decodeTupleJson } from "./json-tuple.ts";

/** Nesting past this gives up (the full path checks the real limit, json-depth.ts). */
const MAX_SCAN_DEPTH = 200;

/** Returned (as an index, or in `p`) inside the scan: not the plain case; the caller takes the full path. */
const BAIL = -1;

/** Scan position, shared by the helpers below (one line at a time, never re-entered). */
let p = 0;

/**
 * The members of `keep` of the JSON object `text` (pruned row: the rule reads no other column), or
 * undefined when the full decoder must decide. `keep` must not name `__proto__`.
 */
export function pickTupleJson(text: string, keep: ReadonlySet<string>): Obj | undefined {
  p = ws(text, 0);
  const o = text.charCodeAt(p) === 123 ? pickObject(text, keep, 1) : undefined;
  if (o === undefined || ws(text, p) !== text.length) return undefined;
  return o;
}

/** A replay envelope's parts (pipe-mode.md §Input), as `envelope()` in pipe/direct.ts builds them (`raw` lines are declined). */
export interface PickedEnvelope {
  ts?: number;
  stream?: string;
  data?: Value;
  raw?: string;
  meta?: Value;
}

/**
 * A replay line `{"ts","stream","data","meta"}` with `data` pruned to `keepFor(stream)`;
 * undefined when the full decoder must decide (also when the stream reads every column, and for
 * a `raw` line, which has nothing to prune). The parts are written into `into` when given (a
 * caller that does not keep the envelope reuses one object for every line).
 */
export function pickEnvelopeJson(
  text: string,
  keepFor: (stream: string | undefined) => ReadonlySet<string> | null,
  into?: PickedEnvelope,
): PickedEnvelope | undefined {
  const s = text;
  let i = ws(s, 0);
  if (s.charCodeAt(i) !== 123) return undefined;
  // One shape for every envelope (absent parts stay undefined, as envelope() in direct.ts gives them).
  const out: PickedEnvelope = into ?? { ts: undefined, stream: undefined, data: undefined, raw: undefined, meta: undefined };
  if (into) (out.ts = undefined), (out.stream = undefined), (out.data = undefined), (out.raw = undefined), (out.meta = undefined);
  // The last occurrence of each member wins, as with JSON.parse. `data` is picked when met, with
  // the columns of the stream named so far; a `stream` after it re-picks it at the end.
  let dA = -1, dStream: string | undefined, tsA = -1, tsB = -1, mA = -1, mB = -1;
  i = ws(s, i + 1);
  if (s.charCodeAt(i) === 125) i++;
  else {
    for (;;) {
      if (s.charCodeAt(i) !== 34) return undefined;
      const kA = i + 1;
      const kB = skipString(s, i);
      if (kB === BAIL || escaped) return undefined;
      i = ws(s, kB);
      if (s.charCodeAt(i) !== 58) return undefined;
      const vA = ws(s, i + 1);
      const key = keyIn(s, kA, kB - 1, ENVELOPE);
      let vB: number;
      // A raw payload is decoded whole by its format: nothing to prune, and the one JSON.parse of
      // the full decoder is cheaper than this scan plus the parse of `meta` (W3: 1.7–1.9×).
      if (key === "raw") return undefined;
      if (key === "data" && s.charCodeAt(vA) === 123) {
        const keep = keepFor((dStream = out.stream));
        if (!keep || keep.has("__proto__")) return undefined;
        p = vA;
        const data = pickObject(s, keep, 2);
        if (data === undefined) return undefined;
        (out.data = data), (dA = vA), (vB = p);
      } else {
        vB = skipValue(s, vA, 2);
        if (vB === BAIL) return undefined;
        const c = s.charCodeAt(vA);
        switch (key) {
          case "ts": (tsA = vA), (tsB = vB); break;
          case "stream": out.stream = c === 34 ? stringAt(s, vA, vB) : undefined; break;
          // Not an object: the full decoder says what it is (or what is wrong with it).
          case "data": return undefined;
          case "meta": (mA = vA), (mB = vB); break;
        }
      }
      i = ws(s, vB);
      const c = s.charCodeAt(i++);
      if (c === 125) break;
      if (c !== 44) return undefined;
      i = ws(s, i);
    }
  }
  if (ws(s, i) !== s.length) return undefined;
  if (tsA >= 0 && isNumberStart(s.charCodeAt(tsA))) out.ts = plainNumber(s, tsA, tsB);
  if (mA >= 0) out.meta = decodeTupleJson(s.slice(mA, mB));
  if (dA >= 0 && dStream !== out.stream) {
    const keep = keepFor(out.stream);
    if (!keep || keep.has("__proto__")) return undefined;
    p = dA;
    out.data = pickObject(s, keep, 2);
  }
  return out;
}

const ENVELOPE = ["ts", "stream", "data", "raw", "meta"];

/** The names of the last column set as an array (a line's keys are matched in place, never sliced). */
let lastSet: ReadonlySet<string> | undefined;
let lastNames: string[] = [];

function namesOf(set: ReadonlySet<string>): string[] {
  if (set !== lastSet) (lastSet = set), (lastNames = [...set]);
  return lastNames;
}

/** The name in `names` that the key text s[a, b) spells (unescaped), or undefined. */
function keyIn(s: string, a: number, b: number, names: string[]): string | undefined {
  const len = b - a;
  for (let j = 0; j < names.length; j++) {
    const k = names[j]!;
    if (k.length !== len) continue;
    let m = 0;
    while (m < len && k.charCodeAt(m) === s.charCodeAt(a + m)) m++;
    if (m === len) return k;
  }
  return undefined;
}

/** The float64 of a (validated) number literal; up to 15 plain digits without a string. */
function plainNumber(s: string, a: number, b: number): number {
  if (b - a > 15) return Number(s.slice(a, b));
  let n = 0;
  for (let i = a; i < b; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return Number(s.slice(a, b));
    n = n * 10 + (c - 48);
  }
  return n;
}

function isNumberStart(c: number): boolean {
  return c === 45 || (c >= 48 && c <= 57);
}

/** The object at `p` (`{`): kept members built, the rest validated and skipped; leaves p after `}`. */
function pickObject(s: string, keep: ReadonlySet<string>, depth: number): Obj | undefined {
  const o: Obj = {};
  const names = namesOf(keep);
  let i = ws(s, p + 1);
  if (s.charCodeAt(i) === 125) {
    p = i + 1;
    return o;
  }
  for (;;) {
    if (s.charCodeAt(i) !== 34) return undefined;
    const kA = i + 1;
    const kB = skipString(s, i);
    if (kB === BAIL || escaped) return undefined;
    i = ws(s, kB);
    if (s.charCodeAt(i) !== 58) return undefined;
    const vA = ws(s, i + 1);
    const k = keyIn(s, kA, kB - 1, names);
    if (k !== undefined) {
      const v = valueAt(s, vA, depth + 1);
      if (p === BAIL) return undefined;
      o[k] = v;
      i = ws(s, p);
    } else {
      const vB = skipValue(s, vA, depth + 1);
      if (vB === BAIL) return undefined;
      i = ws(s, vB);
    }
    const c = s.charCodeAt(i++);
    if (c === 125) break;
    if (c !== 44) return undefined;
    i = ws(s, i);
  }
  p = i;
  return o;
}

/** The value at a, pipe-mode's number typing; p = the index after it, or BAIL. */
function valueAt(s: string, a: number, depth: number): Value {
  const c = s.charCodeAt(a);
  if (c === 34) {
    const b = (p = skipString(s, a));
    if (b === BAIL) return null;
    return escaped ? (JSON.parse(s.slice(a, b)) as string) : s.slice(a + 1, b - 1);
  }
  if (c === 45 || (c >= 48 && c <= 57)) return numberAt(s, a);
  const b = (p = skipValue(s, a, depth));
  if (b === BAIL) return null;
  if (c === 116) return true;
  if (c === 102) return false;
  if (c === 110) return null;
  return decodeTupleJson(s.slice(a, b));
}

function stringAt(s: string, a: number, b: number): string {
  for (let i = a + 1; i < b - 1; i++) if (s.charCodeAt(i) === 92) return JSON.parse(s.slice(a, b)) as string;
  return s.slice(a + 1, b - 1);
}

/**
 * The number literal at a (p = the index after it, or BAIL): an integer literal is int64 (a float
 * beyond int64's range, as Go's decoder does), anything with a fraction or exponent float64.
 */
function numberAt(s: string, a: number): Value {
  let i = a;
  const neg = s.charCodeAt(i) === 45;
  if (neg) i++;
  const d0 = i;
  let c = s.charCodeAt(i);
  let n = 0;
  if (c === 48) c = s.charCodeAt(++i);
  else if (c >= 49 && c <= 57) {
    do {
      n = n * 10 + (c - 48);
      c = s.charCodeAt(++i);
    } while (c >= 48 && c <= 57);
  } else return (p = BAIL), null;
  if (c !== 46 && c !== 101 && c !== 69) {
    p = i;
    // Up to 15 digits the double accumulated above is the integer exactly.
    if (i - d0 <= 15) return BigInt(neg ? -n : n);
    const text = s.slice(a, i);
    const big = BigInt(text);
    return big > 9223372036854775807n || big < -9223372036854775808n ? Number(text) : big;
  }
  if (c === 46) {
    // A decimal fraction of at most 15 digits in all and no exponent: the digits as an integer
    // and one division by an exact power of ten give the correctly rounded double (Clinger's
    // fast path), as Number() of the text would.
    const f0 = i + 1;
    c = s.charCodeAt(++i);
    while (c >= 48 && c <= 57) {
      n = n * 10 + (c - 48);
      c = s.charCodeAt(++i);
    }
    const digits = i - d0 - 1;
    if (i > f0 && c !== 101 && c !== 69 && digits <= 15) {
      p = i;
      const v = n / POW10[i - f0]!;
      return neg ? -v : v;
    }
  }
  const b = (p = skipNumber(s, a));
  return b === BAIL ? null : Number(s.slice(a, b));
}

/** 10^0 … 10^15, each exact in a double. */
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/** The index of the first non-blank at or after i (JSON's four blanks only). */
function ws(s: string, i: number): number {
  // Never read past the end: an out-of-range charCodeAt (NaN) makes JSC recompile the caller slowly.
  // Lines rarely hold blanks: the loop stays out of line, so the twenty call sites the JIT inlines
  // this at stay small (JIT compile time of the scan: about 0.6× in a cold 1M-line run).
  if (i >= s.length || s.charCodeAt(i) > 32) return i;
  return blanks(s, i);
}

function blanks(s: string, i: number): number {
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c > 32 || !(c === 32 || c === 10 || c === 13 || c === 9)) return i;
    i++;
  }
  return i;
}

/** The last skipString met a backslash. */
let escaped = false;

/** Validates the string at i (`"`); the index after its closing quote, or BAIL. */
function skipString(s: string, i: number): number {
  escaped = false;
  const n = s.length;
  for (i++; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 34) return i + 1;
    if (c < 32) return BAIL;
    if (c === 92) {
      escaped = true;
      const e = s.charCodeAt(++i);
      if (e === 117) {
        for (let k = 0; k < 4; k++) if (!isHex(s.charCodeAt(++i))) return BAIL;
      } else if (!(e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116)) return BAIL;
    }
  }
  return BAIL;
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** JSON's number grammar at i; the index after it, or BAIL. */
function skipNumber(s: string, i: number): number {
  if (s.charCodeAt(i) === 45) i++;
  const c = s.charCodeAt(i);
  if (c === 48) i++;
  else if (c >= 49 && c <= 57) while (isDigit(s.charCodeAt(++i)));
  else return BAIL;
  if (s.charCodeAt(i) === 46) {
    if (!isDigit(s.charCodeAt(++i))) return BAIL;
    while (isDigit(s.charCodeAt(++i)));
  }
  const e = s.charCodeAt(i);
  if (e === 101 || e === 69) {
    const sign = s.charCodeAt(++i);
    if (sign === 43 || sign === 45) i++;
    if (!isDigit(s.charCodeAt(i))) return BAIL;
    while (isDigit(s.charCodeAt(++i)));
  }
  return i;
}

/** Validates the value at i (at nesting `depth`); the index after it, or BAIL. */
function skipValue(s: string, i: number, depth: number): number {
  const c = s.charCodeAt(i);
  if (c === 34) return skipString(s, i);
  if (c === 45 || (c >= 48 && c <= 57)) return skipNumber(s, i);
  if (c === 116) return s.startsWith("true", i) ? i + 4 : BAIL;
  if (c === 102) return s.startsWith("false", i) ? i + 5 : BAIL;
  if (c === 110) return s.startsWith("null", i) ? i + 4 : BAIL;
  if (depth >= MAX_SCAN_DEPTH) return BAIL;
  if (c === 123) {
    i = ws(s, i + 1);
    if (s.charCodeAt(i) === 125) return i + 1;
    for (;;) {
      if (s.charCodeAt(i) !== 34) return BAIL;
      i = skipString(s, i);
      if (i === BAIL) return BAIL;
      i = ws(s, i);
      if (s.charCodeAt(i) !== 58) return BAIL;
      i = skipValue(s, ws(s, i + 1), depth + 1);
      if (i === BAIL) return BAIL;
      i = ws(s, i);
      const d = s.charCodeAt(i++);
      if (d === 125) return i;
      if (d !== 44) return BAIL;
      i = ws(s, i);
    }
  }
  if (c === 91) {
    i = ws(s, i + 1);
    if (s.charCodeAt(i) === 93) return i + 1;
    for (;;) {
      i = skipValue(s, i, depth + 1);
      if (i === BAIL) return BAIL;
      i = ws(s, i);
      const d = s.charCodeAt(i++);
      if (d === 93) return i;
      if (d !== 44) return BAIL;
      i = ws(s, i);
    }
  }
  return BAIL;
}
