/**
 * String functions (functions §8). Arguments are rendered with `toStr` (Go `%v`, null → "");
 * offsets and lengths are UTF-8 bytes unless the entry says code points.
 */
import { RowError } from "../errors.ts";
import { isObj, toFloatSame, toIntStrict, toStr, type Value } from "../value/values.ts";
import type { Expr } from "../sql/ast.ts";
import {
  arity,
  atLeastArgs,
  expectType,
  INT,
  isIntegerLit,
  isStringLit,
  notInt,
  notString,
  register,
  STRING,
  validateArgs,
  type FuncDef,
  type Validator,
} from "./registry.ts";
import { callSiteRegex, goFindString, goMatchString, goReplaceAllString } from "./regex/index.ts";
import { formatFixed, formatLocale } from "./string-format.ts";
import {
  caseMapGo,
  codePointCount,
  reverseCodePoints,
  sliceUtf8,
  trimLeftGo,
  trimRightGo,
  utf8IndexOf,
  utf8Length,
} from "./string-text.ts";

const S1 = validateArgs(1, [STRING]);
const S2 = validateArgs(2, [STRING, STRING]);
const SI = validateArgs(2, [STRING, INT]);

/** A negative integer literal (negatives are folded into the literal by the parser). */
function negativeIntLit(e: Expr | undefined): boolean {
  return e !== undefined && e.kind === "integer" && e.value < 0n;
}

const validateConcat: Validator = (args) => {
  if (args.length === 0) return "The arguments should be at least one.";
  for (let i = 0; i < args.length; i++) if (notString(args[i]!)) return expectType("string", i + 1);
  return undefined;
};

const validateSubstring: Validator = (args) => {
  if (args.length !== 2 && args.length !== 3) return "the arguments for substring should be 2 or 3";
  if (notString(args[0]!)) return expectType("string", 1);
  for (let i = 1; i < args.length; i++) if (notInt(args[i]!)) return expectType("int", i + 1);
  const start = args[1]!;
  if (start.kind === "integer") {
    if (start.value < 0n) return "The start index should not be a nagtive integer.";
    const end = args[2];
    if (end?.kind === "integer" && end.value < start.value)
      return "The end index should be larger than start index.";
  }
  return undefined;
};

const validateSplitValue: Validator = (args) => {
  if (args.length !== 3) return "the arguments for split_value should be 3";
  if (notString(args[0]!)) return expectType("string", 1);
  if (notString(args[1]!)) return expectType("string", 2);
  if (notInt(args[2]!)) return expectType("int", 3);
  if (negativeIntLit(args[2])) return "The index should not be a nagtive integer.";
  return undefined;
};

const validateFormat: Validator = (args) => {
  if (args.length < 2) return atLeastArgs(2, args.length);
  if (!isIntegerLit(args[1]!)) return expectType("integer", 2);
  if (args.length === 3 && !isStringLit(args[2]!)) return expectType("string", 3);
  return undefined;
};

/** `strings.Repeat(" ", n)` joined to s; a negative n is eKuiper's panic, surfaced as an error. */
function pad(args: Value[], left: boolean): string {
  const s = toStr(args[0]);
  const n = toIntStrict(args[1]!);
  if (n < 0n) throw new RowError("strings: negative Repeat count");
  if (n > 0x1fffffffn) throw new RowError("strings: Repeat output length overflow");
  const spaces = " ".repeat(Number(n));
  return left ? spaces + s : s + spaces;
}

/** functions §8.5: byte slice [start, end) of the UTF-8 text. */
function substring(args: Value[]): string {
  const s = toStr(args[0]);
  const n = utf8Length(s);
  const start = toIntStrict(args[1]!);
  if (start < 0n) throw new RowError("start index must be a positive number");
  if (args.length === 3) {
    const end = toIntStrict(args[2]!);
    if (end < 0n) throw new RowError("end index must be a positive number");
    if (start > end) throw new RowError("start index must be smaller than end index");
    if (start > BigInt(n)) return "";
    return sliceUtf8(s, Number(start), end > BigInt(n) ? n : Number(end));
  }
  if (start > BigInt(n)) return "";
  return sliceUtf8(s, Number(start), n);
}

/** functions §8.6: Go `strings.Split` (an empty separator splits into code points). */
function splitValue(args: Value[]): string {
  const s = toStr(args[0]);
  const sep = toStr(args[1]);
  const parts = sep === "" ? Array.from(s) : s.split(sep);
  let i = 0n;
  try {
    i = toIntStrict(args[2]!);
  } catch {
    // eKuiper ignores the conversion error: a non-integer index acts as 0.
  }
  const n = BigInt(parts.length);
  if (i > n - 1n || i < -n) throw new RowError(`${i} out of index array (size = ${n})`);
  return parts[Number(i >= 0n ? i : n + i)]!;
}

/** functions §8.7; a 4th argument makes eKuiper skip the locale. */
function format(args: Value[]): string {
  let x = 0;
  try {
    x = toFloatSame(args[0]!);
  } catch {
    // eKuiper ignores the conversion error: a non-number formats as 0.
  }
  const d = toIntStrict(args[1]!);
  if (d < 0n) throw new RowError("the decimal places must greater or equal than 0");
  if (args.length === 3) return formatLocale(x, Number(d), toStr(args[2]));
  return formatFixed(x, Number(d));
}

const defs: FuncDef[] = [
  {
    name: "concat",
    kind: "scalar",
    validate: validateConcat,
    exec: (args) => {
      let out = "";
      for (let i = 0; i < args.length; i++) out += toStr(args[i]);
      return out;
    },
  },
  {
    name: "endswith",
    kind: "scalar",
    validate: S2,
    policy: "F",
    exec: (args) => toStr(args[0]).endsWith(toStr(args[1])),
  },
  {
    name: "startswith",
    kind: "scalar",
    validate: S2,
    policy: "F",
    exec: (args) => toStr(args[0]).startsWith(toStr(args[1])),
  },
  {
    name: "indexof",
    kind: "scalar",
    validate: S2,
    exec: (args) =>
      args[0] === null || args[1] === null
        ? -1n
        : BigInt(utf8IndexOf(toStr(args[0]), toStr(args[1]))),
  },
  {
    name: "length",
    kind: "scalar",
    validate: arity(1),
    policy: "Z",
    exec: (args) => {
      const x = args[0]!;
      if (Array.isArray(x)) return BigInt(x.length);
      if (isObj(x)) return BigInt(Object.keys(x).length);
      return BigInt(codePointCount(toStr(x)));
    },
  },
  { name: "lower", kind: "scalar", validate: S1, policy: "N", exec: (a) => caseMapGo(toStr(a[0]), false) },
  { name: "upper", kind: "scalar", validate: S1, policy: "N", exec: (a) => caseMapGo(toStr(a[0]), true) },
  { name: "lpad", kind: "scalar", validate: SI, policy: "N", exec: (a) => pad(a, true) },
  { name: "rpad", kind: "scalar", validate: SI, policy: "N", exec: (a) => pad(a, false) },
  { name: "ltrim", kind: "scalar", validate: S1, policy: "N", exec: (a) => trimLeftGo(toStr(a[0])) },
  { name: "rtrim", kind: "scalar", validate: S1, policy: "N", exec: (a) => trimRightGo(toStr(a[0])) },
  {
    name: "trim",
    kind: "scalar",
    validate: S1,
    policy: "N",
    exec: (a) => trimLeftGo(trimRightGo(toStr(a[0]))),
  },
  {
    name: "numbytes",
    kind: "scalar",
    validate: S1,
    policy: "Z",
    exec: (a) => BigInt(utf8Length(toStr(a[0]))),
  },
  {
    name: "regexp_matches",
    kind: "scalar",
    validate: S2,
    policy: "F",
    exec: (a, ctx) => goMatchString(callSiteRegex(ctx, toStr(a[1])), toStr(a[0])),
  },
  {
    name: "regexp_replace",
    kind: "scalar",
    validate: validateArgs(3, [STRING, STRING, STRING]),
    policy: "N",
    exec: (a, ctx) => goReplaceAllString(callSiteRegex(ctx, toStr(a[1])), toStr(a[0]), toStr(a[2])),
  },
  {
    name: "regexp_substr",
    kind: "scalar",
    validate: S2,
    policy: "N",
    exec: (a, ctx) => goFindString(callSiteRegex(ctx, toStr(a[1])), toStr(a[0])),
  },
  { name: "reverse", kind: "scalar", validate: S1, policy: "N", exec: (a) => reverseCodePoints(toStr(a[0])) },
  { name: "substring", kind: "scalar", validate: validateSubstring, policy: "N", exec: substring },
  { name: "split_value", kind: "scalar", validate: validateSplitValue, policy: "N", exec: splitValue },
  { name: "format", kind: "scalar", validate: validateFormat, policy: "N", exec: format },
];

register(...defs);
