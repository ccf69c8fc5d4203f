/** Conversion functions (functions.md §12): cast, to_json, parse_json, chr, encode/decode, trunc, ... */
import { RowError } from "../errors.ts";
import { toTime } from "../value/time.ts";
import {
  fmtV,
  toBoolAll,
  toFloatAll,
  toFloatSame,
  toIntAll,
  toIntStrict,
  toStrConv,
  typeValue,
  type Value,
} from "../value/values.ts";
import { encodeGoJson } from "../value/json-encode.ts";
import { decodeBase64Go } from "../value/go-base64.ts";
import { parseGoJson } from "../value/go-json.ts";
import {
  arity,
  expectArgs,
  expectType,
  INT,
  isBooleanish,
  isFloatLit,
  isNumericLit,
  isTimeLit,
  NUMBER,
  register,
  STRING,
  validateArgs,
  type CallCtx,
  type Validator,
} from "./registry.ts";

const CAST_TYPES = new Set(["bigint", "float", "string", "boolean", "datetime", "bytea"]);

const validateCast: Validator = (args) => {
  if (args.length !== 2) return expectArgs(2, args.length);
  const t = args[1]!;
  // eKuiper reports the type parameter as "parameter 1" [quirk].
  if (isNumericLit(t) || isTimeLit(t) || isBooleanish(t)) return expectType("string", 1);
  if (t.kind === "string" && !CAST_TYPES.has(t.value)) {
    return "Expect one of following value for the 2nd parameter: bigint, float, string, boolean, datetime, bytea.";
  }
  return undefined;
};

function unsupported(e: unknown): unknown {
  return e instanceof RowError ? new RowError(`not supported type conversion, got error ${e.message}`) : e;
}

/** `cast(x, type)` with eKuiper's rules (§12.1); also used by `get_keyed_state`. */
export function castTo(x: Value, t: Value, ctx: CallCtx): Value {
  if (typeof t !== "string") throw new RowError("expect string type for type parameter");
  switch (t) {
    case "bigint":
      try {
        return toIntAll(x);
      } catch (e) {
        throw unsupported(e);
      }
    case "float":
      try {
        return toFloatAll(x);
      } catch (e) {
        throw unsupported(e);
      }
    case "string":
      return toStrConv(x);
    case "boolean":
      try {
        return toBoolAll(x);
      } catch (e) {
        throw unsupported(e);
      }
    case "datetime":
      return toTime(x, ctx.env.zone, undefined, ctx.env.now());
    case "bytea":
      return toBytea(x);
  }
  throw new RowError("unknow type, only support bigint, float, string, boolean and datetime");
}

/** Bytes unchanged; a string is base64-decoded when it decodes, else taken as UTF-8 [quirk]. */
function toBytea(x: Value): Uint8Array {
  if (x instanceof Uint8Array) return x;
  if (typeof x === "string") {
    try {
      return decodeBase64Go(x);
    } catch {
      return new TextEncoder().encode(x);
    }
  }
  throw new RowError(`cannot convert ${typeValue(x)} to bytea`);
}

// encode/decode: the method must be the string literal "base64".
const validateCodec: Validator = (args) => {
  if (args.length !== 2) return expectArgs(2, args.length);
  const s = args[0]!;
  if (isNumericLit(s) || isTimeLit(s) || isBooleanish(s)) return expectType("string", 1);
  const m = args[1]!;
  if (m.kind !== "string") return expectType("string", 2);
  if (m.value !== "base64") return "Only base64 is supported for the 2nd parameter.";
  return undefined;
};

const validateChr: Validator = (args) => {
  if (args.length !== 1) return expectArgs(1, args.length);
  const a = args[0]!;
  if (isFloatLit(a) || isTimeLit(a) || isBooleanish(a)) return expectType("int", 1);
  return undefined;
};

/** Go `rune(x)`: the low 32 bits, signed. */
function toRune(v: bigint): bigint {
  return BigInt.asIntN(32, v);
}

// Go math.Pow10's tables, so negative and large exponents round exactly as Go's do.
const POW10: number[] = [];
for (let i = 0; i < 32; i++) POW10.push(Number(`1e${i}`));
const POW10_POS32 = [1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288];
const POW10_NEG32 = [1e-0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320];

function pow10(n: number): number {
  if (n >= 0 && n <= 308) return POW10_POS32[n >>> 5]! * POW10[n & 31]!;
  if (n < 0 && n >= -323) return POW10_NEG32[-n >>> 5]! / POW10[-n & 31]!;
  return n > 0 ? Infinity : 0;
}

const HEX_DIGITS = /^[+-]?[0-9a-fA-F]+$/;
const MAX_INT64 = 9223372036854775807n;
const MIN_INT64 = -9223372036854775808n;

register(
  {
    name: "cast",
    kind: "scalar",
    validate: validateCast,
    policy: "N",
    exec: (args, ctx) => castTo(args[0]!, args[1]!, ctx),
  },
  {
    name: "to_json",
    kind: "scalar",
    validate: arity(1),
    policy: "N",
    exec: (args) => {
      try {
        return encodeGoJson(args[0]!);
      } catch {
        throw new RowError(`fail to convert ${fmtV(args[0])} to json`);
      }
    },
  },
  {
    name: "parse_json",
    kind: "scalar",
    validate: validateArgs(1, [STRING]),
    exec: (args) => {
      const s = args[0]!;
      if (s === null || s === "null") return null;
      let text: string;
      if (typeof s === "string") text = s;
      else if (s instanceof Uint8Array) text = new TextDecoder().decode(s);
      else throw new RowError(`fail to convert ${fmtV(s)} to string`);
      try {
        return parseGoJson(text);
      } catch (e) {
        throw e instanceof RowError ? new RowError(`fail to parse json: ${e.message}`) : e;
      }
    },
  },
  {
    name: "chr",
    kind: "scalar",
    validate: validateChr,
    policy: "N",
    // Returns the code point *number*, not a character [code≠docs].
    exec: (args) => {
      const v = args[0]!;
      if (typeof v === "bigint") return toRune(v);
      if (typeof v === "number") return toRune(Number.isFinite(v) ? BigInt(Math.trunc(v)) : MIN_INT64);
      if (typeof v === "string") {
        if (v.length === 0) return null; // eKuiper crashes here
        if (v.length > 1 || v.charCodeAt(0) > 0x7f) throw new RowError("Parameter length cannot larger than 1.");
        return BigInt(v.charCodeAt(0));
      }
      throw new RowError("Only bigint, float and string type can be convert to char type.");
    },
  },
  {
    name: "encode",
    kind: "scalar",
    validate: validateCodec,
    policy: "N",
    exec: (args) => {
      const s = args[0]!;
      if (typeof s !== "string") throw new RowError("Only string type can be encoded.");
      return Buffer.from(s, "utf8").toString("base64");
    },
  },
  {
    name: "decode",
    kind: "scalar",
    validate: validateCodec,
    policy: "N",
    exec: (args) => {
      const s = args[0]!;
      if (typeof s !== "string") throw new RowError("Only string type can be decoded.");
      try {
        return decodeBase64Go(s);
      } catch (e) {
        throw e instanceof RowError ? new RowError(`fail to decode base64 string: ${e.message}`) : e;
      }
    },
  },
  {
    name: "trunc",
    kind: "scalar",
    validate: validateArgs(2, [NUMBER, INT]),
    policy: "N",
    // Rounds half away from zero [code≠docs]: float(int64(x·f + copysign(0.5, x·f))) / f.
    exec: (args) => {
      const x = toFloatSame(args[0]!);
      const d = args[1]!;
      if (typeof d !== "bigint") throw new RowError("The 2nd parameter must be int value.");
      const f = pow10(d > 400n ? 400 : d < -400n ? -400 : Number(d));
      const v = x * f;
      const r = v + (v < 0 || Object.is(v, -0) ? -0.5 : 0.5);
      // Beyond int64 Go's conversion overflows; the spec lets floe return x unchanged.
      if (!(Math.abs(r) < 9223372036854775808)) return x;
      return (Math.trunc(r) || 0) / f;
    },
  },
  {
    name: "isnull",
    kind: "scalar",
    validate: arity(1),
    exec: (args) => args[0] === null,
  },
  {
    name: "coalesce",
    kind: "scalar",
    validate: (args) => (args.length === 0 ? "The arguments should be at least one." : undefined),
    exec: (args) => {
      for (let i = 0; i < args.length; i++) if (args[i] !== null) return args[i]!;
      return null;
    },
  },
  {
    name: "cardinality",
    kind: "scalar",
    validate: arity(1),
    policy: "Z",
    exec: (args) => {
      const a = args[0]!;
      return Array.isArray(a) ? BigInt(a.length) : 0n;
    },
  },
  {
    name: "hex2dec",
    kind: "scalar",
    validate: validateArgs(1, [STRING]),
    policy: "N",
    exec: (args) => {
      const s = args[0]!;
      if (typeof s !== "string") throw new RowError(`invalid input type: ${fmtV(s)} please input hex string`);
      const h = s.startsWith("0x") ? s.slice(2) : s;
      if (HEX_DIGITS.test(h)) {
        const neg = h[0] === "-";
        const digits = h[0] === "-" || h[0] === "+" ? h.slice(1) : h;
        const n = neg ? -BigInt("0x" + digits) : BigInt("0x" + digits);
        if (n <= MAX_INT64 && n >= MIN_INT64) return n;
      }
      throw new RowError(`invalid hexadecimal value: ${h}`);
    },
  },
  {
    name: "dec2hex",
    // S1, so a numeric literal is rejected at parse time [quirk].
    kind: "scalar",
    validate: validateArgs(1, [STRING]),
    policy: "N",
    exec: (args) => "0x" + toIntStrict(args[0]!).toString(16),
  },
);
