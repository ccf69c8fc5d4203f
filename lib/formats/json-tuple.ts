/**
 * JSON → values for tuple input (pipe-mode lines and replay `data`, pipe-mode.md): whole numbers
 * written without a fraction or exponent are int64 (`bigint`, exact beyond 2^53), every other
 * number is float64. `1.0` stays a float.
 *
 * Fast path: the native JSON.parse, then integral numbers become bigint — valid only when the
 * text holds no whole-valued float literal (`1.0`, `1e3`) and no integer beyond 2^53; a cheap
 * scan decides, and the exact parser below takes the rare remaining lines. The scan is needed
 * only when the conversion met an integral number in a column that is observed: a
 * line whose kept values are all fractional, strings or booleans is what JSON.parse made of it.
 */
import { RowError } from "../errors.ts";
import type { Obj, Value } from "../value/values.ts";
import { DEPTH_ERROR, MIN_DEEP_LENGTH, textTooDeep, valueTooDeep } from "../value/json-depth.ts";

// A number literal with a zero-only fraction or an exponent: its value may be whole but it is a float.
const WHOLE_FLOAT_TEXT = /\d\.0*(?![0-9])|\d[eE][+-]?\d/;

/**
 * Decodes one JSON text; throws SyntaxError/RowError when it is not JSON or nests deeper than
 * eKuiper's limit (json-depth.ts). With `keep`, only those
 * top-level keys get the int conversion (column pruning: the rule reads no other column, so the
 * others are never observed).
 */
export function decodeTupleJson(text: string, keep?: ReadonlySet<string> | null): Value {
  // Deeper than eKuiper's limit is a decode error, checked before the recursive exact parser and
  // intify walk the value (json-depth.ts).
  const v = parseFirst(text);
  if (text.length >= MIN_DEEP_LENGTH && valueTooDeep(v)) throw new RowError(DEPTH_ERROR);
  sawInt = false;
  let out: Value;
  try {
    out = keep && v !== null && typeof v === "object" && !Array.isArray(v) ? intifyKept(v as Obj, keep) : intify(v);
  } catch (e) {
    if (e instanceof NeedExact) return exactParse(text);
    throw e;
  }
  return sawInt && WHOLE_FLOAT_TEXT.test(text) ? exactParse(text) : out;
}

/**
 * A replay envelope (`{"ts", "stream", "data", ...}`): like decodeTupleJson, with the pruning of
 * the stream the envelope names (`keepFor(stream)`; undefined stream = the default one).
 */
export function decodeEnvelopeJson(text: string, keepFor: (stream: string | undefined) => ReadonlySet<string> | null): Value {
  const v = parseFirst(text);
  if (text.length >= MIN_DEEP_LENGTH && valueTooDeep(v)) throw new RowError(DEPTH_ERROR);
  if (v === null || typeof v !== "object" || Array.isArray(v)) return WHOLE_FLOAT_TEXT.test(text) ? exactParse(text) : v;
  const env = v as Obj;
  sawInt = false;
  try {
    // The envelope's ts is only ever read as a number (pipe.ts): no bigint for it.
    const data = env.data;
    if (data !== undefined && data !== null && typeof data === "object") {
      const keep = keepFor(typeof env.stream === "string" ? env.stream : undefined);
      env.data = keep && !Array.isArray(data) ? intifyKept(data as Obj, keep) : intify(data);
    }
    if (env.meta !== undefined) env.meta = intify(env.meta);
    return sawInt && WHOLE_FLOAT_TEXT.test(text) ? exactParse(text) : env;
  } catch (e) {
    if (e instanceof NeedExact) return exactParse(text);
    throw e;
  }
}

/**
 * JSON.parse; a text it rejects that holds a whole-valued float literal gets the exact parser's
 * error instead, as when the scan ran first (the error texts stay what they were).
 */
function parseFirst(text: string): Value {
  try {
    return JSON.parse(text) as Value;
  } catch (e) {
    if (WHOLE_FLOAT_TEXT.test(text)) return exactParse(text);
    throw e;
  }
}

/** The exact parser recurses per level: the text is checked against the depth limit first. */
function exactParse(text: string): Value {
  if (textTooDeep(text)) throw new RowError(DEPTH_ERROR);
  return new ExactParser(text).parseDocument();
}

function intifyKept(o: Obj, keep: ReadonlySet<string>): Obj {
  for (const k in o) if (keep.has(k)) o[k] = intify(o[k]!);
  return o;
}

/** The last conversion met an integral number (so a whole-valued float literal could be among them). */
let sawInt = false;

function intify(v: Value): Value {
  if (typeof v === "number") {
    if (!Number.isInteger(v)) return v;
    if (Math.abs(v) > Number.MAX_SAFE_INTEGER) throw new NeedExact();
    sawInt = true;
    return BigInt(v);
  }
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = intify(v[i]!);
    return v;
  }
  const o = v as Obj;
  for (const k in o) {
    const x = o[k]!;
    if (typeof x === "number") {
      if (Number.isInteger(x)) {
        if (Math.abs(x) > Number.MAX_SAFE_INTEGER) throw new NeedExact();
        sawInt = true;
        o[k] = BigInt(x);
      }
    } else if (x !== null && typeof x === "object") o[k] = intify(x);
  }
  return o;
}

/** The fast path met an integer beyond 2^53: only the exact parser keeps its digits. */
class NeedExact {}

/** A small exact JSON parser keeping the int/float distinction of number literals. */
class ExactParser {
  private i = 0;
  constructor(private readonly s: string) {}

  parseDocument(): Value {
    this.ws();
    const v = this.value();
    this.ws();
    if (this.i < this.s.length) this.fail("after top-level value");
    return v;
  }

  private fail(what: string): never {
    const c = this.s[this.i];
    throw new RowError(c === undefined ? "unexpected end of JSON input" : `invalid character '${c}' ${what}`);
  }

  private ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.i++;
      else break;
    }
  }

  private value(): Value {
    const s = this.s;
    const c = s[this.i];
    if (c === "{") return this.object();
    if (c === "[") return this.array();
    if (c === '"') return this.string();
    if (c === "t" && s.startsWith("true", this.i)) return (this.i += 4), true;
    if (c === "f" && s.startsWith("false", this.i)) return (this.i += 5), false;
    if (c === "n" && s.startsWith("null", this.i)) return (this.i += 4), null;
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
    return this.fail("looking for beginning of value");
  }

  private object(): Obj {
    const o: Obj = {};
    this.i++;
    this.ws();
    if (this.s[this.i] === "}") return this.i++, o;
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail("looking for beginning of object key string");
      const k = this.string();
      this.ws();
      if (this.s[this.i] !== ":") this.fail("after object key");
      this.i++;
      this.ws();
      const v = this.value();
      // As JSON.parse: `__proto__` is an own member, not the prototype (which `o[k] =` would set).
      if (k === "__proto__") Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
      else o[k] = v;
      this.ws();
      const c = this.s[this.i++];
      if (c === "}") return o;
      if (c !== ",") (this.i--, this.fail("after object key:value pair"));
    }
  }

  private array(): Value[] {
    const a: Value[] = [];
    this.i++;
    this.ws();
    if (this.s[this.i] === "]") return this.i++, a;
    for (;;) {
      this.ws();
      a.push(this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === "]") return a;
      if (c !== ",") (this.i--, this.fail("after array element"));
    }
  }

  private string(): string {
    const s = this.s;
    const start = this.i;
    this.i++;
    let escaped = false;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 34) break;
      if (c === 92) {
        escaped = true;
        this.i++;
      }
      this.i++;
    }
    if (this.i >= s.length) this.fail("in string literal");
    this.i++;
    const raw = s.slice(start, this.i);
    return escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  }

  private number(): Value {
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.s.slice(this.i, this.i + 400));
    if (!m) return this.fail("in numeric literal");
    this.i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) {
      const n = BigInt(m[0]);
      // Go's decoder to interface{} would fail an out-of-range int64; keep it as a float then.
      return n > 9223372036854775807n || n < -9223372036854775808n ? Number(m[0]) : n;
    }
    return Number(m[0]);
  }
}
