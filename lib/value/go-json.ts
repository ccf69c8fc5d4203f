/**
 * Decoding JSON text the way Go's `json.Unmarshal` into `interface{}` does: numbers become
 * floats, duplicate keys keep the last value, and failures carry Go's error texts
 * (`invalid character 'k' looking for beginning of value`, `unexpected end of JSON input`, ...).
 */
import { RowError } from "../errors.ts";
import { isObj, type Value } from "./values.ts";

/** Parses `text`; throws RowError with Go's message (without any caller prefix). */
export function parseGoJson(text: string): Value {
  let v: Value;
  try {
    v = JSON.parse(text) as Value;
  } catch {
    throw new RowError(goSyntaxError(text) ?? "unexpected end of JSON input");
  }
  if (hasInfinity(v)) throw new RowError(overflowError(text));
  return v;
}

function hasInfinity(v: Value): boolean {
  if (typeof v === "number") return !Number.isFinite(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasInfinity(v[i]!)) return true;
    return false;
  }
  if (isObj(v)) {
    for (const k in v) if (hasInfinity(v[k]!)) return true;
  }
  return false;
}

// JSON.parse turned a number literal that overflows float64 into Infinity; Go names the literal.
const NUMBER_TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

function overflowError(text: string): string {
  for (const m of text.matchAll(NUMBER_TOKEN)) {
    const t = m[0];
    if (t[0] !== '"' && !Number.isFinite(Number(t))) {
      return `json: cannot unmarshal number ${t} into Go value of type float64`;
    }
  }
  return "json: cannot unmarshal number into Go value of type float64";
}

// ---------------------------------------------------------------------------------------------
// Go's scanner (encoding/json/scanner.go), reduced to finding the first syntax error.

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** Go `quoteChar`: the offending byte as Go prints it inside `invalid character ...`. */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  if (c === 0x5c) return "'\\\\'";
  const short: Record<number, string> = { 7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v" };
  if (short[c]) return `'${short[c]}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, "0")}'`;
  if (c >= 0x80 && (c < 0xa1 || c === 0xad)) return `'\\u${c.toString(16).padStart(4, "0")}'`;
  return `'${String.fromCharCode(c)}'`;
}

function invalid(c: number, context: string): string {
  return `invalid character ${quoteChar(c)} ${context}`;
}

/** The first syntax error Go's scanner reports for `text`, or undefined if it finds none. */
export function goSyntaxError(text: string): string | undefined {
  const b = new TextEncoder().encode(text);
  const n = b.length;
  let i = 0;
  const skip = () => {
    while (i < n && isSpace(b[i]!)) i++;
  };
  const eof = "unexpected end of JSON input";

  // Scans one value starting at i (after whitespace); returns an error or undefined.
  const value = (): string | undefined => {
    skip();
    if (i >= n) return eof;
    const c = b[i]!;
    if (c === 0x7b) {
      i++;
      skip();
      if (i >= n) return eof;
      if (b[i] === 0x7d) {
        i++;
        return undefined;
      }
      for (;;) {
        skip();
        if (i >= n) return eof;
        if (b[i] !== 0x22) return invalid(b[i]!, "looking for beginning of object key string");
        const e = str();
        if (e) return e;
        skip();
        if (i >= n) return eof;
        if (b[i] !== 0x3a) return invalid(b[i]!, "after object key");
        i++;
        const ve = value();
        if (ve) return ve;
        skip();
        if (i >= n) return eof;
        if (b[i] === 0x2c) {
          i++;
          continue;
        }
        if (b[i] === 0x7d) {
          i++;
          return undefined;
        }
        return invalid(b[i]!, "after object key:value pair");
      }
    }
    if (c === 0x5b) {
      i++;
      skip();
      if (i >= n) return eof;
      if (b[i] === 0x5d) {
        i++;
        return undefined;
      }
      for (;;) {
        const ve = value();
        if (ve) return ve;
        skip();
        if (i >= n) return eof;
        if (b[i] === 0x2c) {
          i++;
          continue;
        }
        if (b[i] === 0x5d) {
          i++;
          return undefined;
        }
        return invalid(b[i]!, "after array element");
      }
    }
    if (c === 0x22) return str();
    if (c === 0x2d || isDigit(c)) return num();
    if (c === 0x74) return literal("true");
    if (c === 0x66) return literal("false");
    if (c === 0x6e) return literal("null");
    return invalid(c, "looking for beginning of value");
  };

  const str = (): string | undefined => {
    i++; // opening quote
    while (i < n) {
      const c = b[i]!;
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c < 0x20) return invalid(c, "in string literal");
      if (c === 0x5c) {
        i++;
        if (i >= n) return eof;
        const e = b[i]!;
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) {
            i++;
            if (i >= n) return eof;
            if (!isHex(b[i]!)) return invalid(b[i]!, "in \\u hexadecimal character escape");
          }
        } else if (!"\"\\/bfnrt".includes(String.fromCharCode(e))) {
          return invalid(e, "in string escape code");
        }
      }
      i++;
    }
    return eof;
  };

  const num = (): string | undefined => {
    if (b[i] === 0x2d) {
      i++;
      if (i >= n) return eof;
      if (!isDigit(b[i]!)) return invalid(b[i]!, "in numeric literal");
    }
    if (b[i] === 0x30) i++;
    else while (i < n && isDigit(b[i]!)) i++;
    if (i < n && b[i] === 0x2e) {
      i++;
      if (i >= n) return eof;
      if (!isDigit(b[i]!)) return invalid(b[i]!, "after decimal point in numeric literal");
      while (i < n && isDigit(b[i]!)) i++;
    }
    if (i < n && (b[i] === 0x65 || b[i] === 0x45)) {
      i++;
      if (i < n && (b[i] === 0x2b || b[i] === 0x2d)) i++;
      if (i >= n) return eof;
      if (!isDigit(b[i]!)) return invalid(b[i]!, "in exponent of numeric literal");
      while (i < n && isDigit(b[i]!)) i++;
    }
    return undefined;
  };

  const literal = (word: string): string | undefined => {
    i++;
    for (let k = 1; k < word.length; k++, i++) {
      if (i >= n) return eof;
      if (b[i] !== word.charCodeAt(k)) {
        return invalid(b[i]!, `in literal ${word} (expecting '${word[k]}')`);
      }
    }
    return undefined;
  };

  const e = value();
  if (e) return e;
  skip();
  if (i < n) return invalid(b[i]!, "after top-level value");
  return undefined;
}

/** Go's name for the kind of a decoded JSON value, as its unmarshal errors print it. */
export function jsonKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "object") return "object";
  return typeof v;
}

/** A decoded JSON object (what Go decodes into a struct or map). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A field of a decoded object as Go struct decoding reads it: the exact key, else the last case-insensitive match. */
export function field(o: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(o, name)) return o[name];
  const lower = name.toLowerCase();
  let v: unknown;
  for (const k of Object.keys(o)) if (k.toLowerCase() === lower) v = o[k];
  return v;
}

/** Sets `key` on a decoded object, dropping its case-insensitive twins (Go decoding onto existing fields). */
export function assignField(o: Record<string, unknown>, key: string, v: unknown): void {
  const lower = key.toLowerCase();
  for (const k of Object.keys(o)) if (k !== key && k.toLowerCase() === lower) delete o[k];
  o[key] = v;
}
