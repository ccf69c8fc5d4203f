/** `conv(n, from, to)`: MySQL-style base conversion as eKuiper ports it (functions.md §6). */
import { RowError } from "../errors.ts";
import { fmtV, toIntSame, type Value } from "../value/values.ts";

const U64 = (1n << 64n) - 1n;
const MAX_I64 = (1n << 63n) - 1n;
const MIN_I64_ABS = 1n << 63n;

/** Value of an ASCII digit/letter (case-insensitive), or 99 when not one. */
function digitValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 90) return c - 55;
  if (c >= 97 && c <= 122) return c - 87;
  return 99;
}

/** The longest valid prefix: optional sign then digits of `base`; a `+` is dropped. */
function validPrefix(s: string, base: number): string {
  let validLen = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 43 || c === 45) {
      if (i !== 0) break;
      continue;
    }
    if (digitValue(c) >= base) break;
    validLen = i + 1;
  }
  if (validLen > 1 && s[0] === "+") return s.slice(1, validLen);
  return s.slice(0, validLen);
}

/** Go `strconv.ParseUint(s, base, 64)` on a string of valid digits. */
function parseUint(s: string, base: number): bigint {
  let v = 0n;
  const b = BigInt(base);
  for (let i = 0; i < s.length; i++) {
    v = v * b + BigInt(digitValue(s.charCodeAt(i)));
    if (v > U64) throw new RowError(`strconv.ParseUint: parsing "${s}": value out of range`);
  }
  return v;
}

// Go unicode.IsSpace (JS `trim` differs: it strips U+FEFF but not U+0085).
const GO_SPACE_EDGES = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

export function conv(args: Value[]): Value {
  let from = toIntSame(args[1]!);
  let to = toIntSame(args[2]!);
  const signed = from < 0n;
  if (signed) from = -from;
  const signedOut = to < 0n;
  if (signedOut) to = -to;
  if (from < 2n || from > 36n || to < 2n || to > 36n) return null;

  let s = validPrefix(fmtV(args[0]).replace(GO_SPACE_EDGES, ""), Number(from));
  if (s.length === 0) return "0";
  let negative = false;
  if (s[0] === "-") {
    negative = true;
    s = s.slice(1);
  }
  if (s.length === 0) throw new RowError(`strconv.ParseUint: parsing "": invalid syntax`);
  let val = parseUint(s, Number(from));
  if (signed) {
    if (negative && val > MIN_I64_ABS) val = MIN_I64_ABS;
    if (!negative && val > MAX_I64) val = MAX_I64;
  }
  if (negative) val = (-val) & U64;
  negative = val > MAX_I64;
  if (signedOut && negative) val = (-val) & U64;
  let out = val.toString(Number(to)).toUpperCase();
  if (negative && signedOut) out = "-" + out;
  return out;
}
