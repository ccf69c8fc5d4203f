/**
 * gval's evaluation model for JSON path filters and scripts (functions.md §9.2): evaluables,
 * its loose conversions (numbers from numeric strings, booleans from "true"/numbers) and the
 * operators of the "full" language, combined the way gval combines typed operator variants.
 */
import { RowError } from "../../errors.ts";
import { fmtV, floatToInt64, goType, parseGoFloat, strictEqual, type Value } from "../../value/values.ts";
import { compareBytewise } from "../key-order.ts";
import { goPow } from "../math-go.ts";
import { goRegex as compileRegex } from "../regex/index.ts";

/** An evaluable: `cur` is the current element (`@`), `root` the document (`$`). */
export type Ev = ((cur: Value, root: Value) => Value) & { isConst?: boolean };

export function constant(v: Value): Ev {
  const f: Ev = () => v;
  f.isConst = true;
  return f;
}

/** gval `convertToFloat`: numbers, and strings Go's ParseFloat accepts. */
export function toFloat(v: Value): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "string") return parseGoFloat(v);
  return undefined;
}

/** gval `convertToBool`: bools, null, "true"/"TRUE"/"false"/"FALSE", numbers (≠ 0). */
export function toBool(v: Value): boolean | undefined {
  if (typeof v === "boolean") return v;
  if (v === null || v === "false" || v === "FALSE") return false;
  if (v === "true" || v === "TRUE") return true;
  const f = toFloat(v);
  return f === undefined ? undefined : f !== 0;
}

export function evalInt(ev: Ev, cur: Value, root: Value): number {
  const v = ev(cur, root);
  const f = toFloat(v);
  if (f === undefined) throw new RowError(`expected number but got ${fmtV(v)} (${goType(v)})`);
  return Number(floatToInt64(f));
}

export function evalString(ev: Ev, cur: Value, root: Value): string {
  return fmtV(ev(cur, root));
}

export function evalBool(ev: Ev, cur: Value, root: Value): boolean {
  const v = ev(cur, root);
  const b = toBool(v);
  if (b === undefined) throw new RowError(`expected bool but got ${fmtV(v)} (${goType(v)})`);
  return b;
}

/** Go `reflect.Value.IsZero` for the value kinds a path yields. */
export function isZero(v: Value): boolean {
  return v === null || v === false || v === "" || v === 0n || Object.is(v, 0);
}

type Binary = (a: Value, b: Value) => Value;

interface Variants {
  number?: (a: number, b: number) => Value;
  bool?: (a: boolean, b: boolean) => Value;
  text?: (a: string, b: string) => Value;
  arbitrary?: Binary;
  shortCircuit?: (a: Value) => boolean;
}

/**
 * gval `infix.initiate`: exact-type variants first (number, bool, text), then the converting
 * ones (number, bool, text unless there is an arbitrary variant), then the arbitrary one.
 */
function combine(name: string, v: Variants): Binary {
  return (a, b) => {
    if (v.number && typeof a === "number" && typeof b === "number") return v.number(a, b);
    if (v.bool && typeof a === "boolean" && typeof b === "boolean") return v.bool(a, b);
    if (v.text && typeof a === "string" && typeof b === "string") return v.text(a, b);
    if (v.number) {
      const x = toFloat(a);
      const y = toFloat(b);
      if (x !== undefined && y !== undefined) return v.number(x, y);
    }
    if (v.bool) {
      const x = toBool(a);
      const y = toBool(b);
      if (x !== undefined && y !== undefined) return v.bool(x, y);
    }
    if (v.text && !v.arbitrary && a !== null && b !== null) return v.text(fmtV(a), fmtV(b));
    if (v.arbitrary) return v.arbitrary(a, b);
    throw new RowError(`invalid operation (${goType(a)}) ${name} (${goType(b)})`);
  };
}

export type Builder = (a: Ev, b: Ev) => Ev;

function infix(name: string, variants: Variants): Builder {
  const f = combine(name, variants);
  const sc = variants.shortCircuit;
  return (a, b) => (cur, root) => {
    const x = a(cur, root);
    if (sc && sc(x)) return x;
    return f(x, b(cur, root));
  };
}

const toInt64 = (f: number) => floatToInt64(f);
const fromInt64 = (i: bigint) => Number(BigInt.asIntN(64, i));

/** Go `uint64(b)` as a shift count; undefined when the shift clears every bit. */
function shiftCount(b: number): bigint | undefined {
  if (!(b >= 0) || b >= 64) return undefined;
  return BigInt(Math.trunc(b));
}

function regexOp(negate: boolean): Builder {
  return (a, b) => {
    if (b.isConst) {
      const re = compileRegex(evalString(b, null, null));
      return (cur, root) => re.test(evalString(a, cur, root)) !== negate;
    }
    return (cur, root) => {
      const s = evalString(a, cur, root);
      return compileRegex(evalString(b, cur, root)).test(s) !== negate;
    };
  };
}

const and: Builder = (a, b) => (cur, root) => evalBool(a, cur, root) && evalBool(b, cur, root);
const or: Builder = (a, b) => (cur, root) => evalBool(a, cur, root) || evalBool(b, cur, root);

function inArray(a: Value, b: Value): Value {
  if (!Array.isArray(b)) {
    throw new RowError(`expected type []interface{} for in operator but got ${goType(b)}`);
  }
  for (let i = 0; i < b.length; i++) if (strictEqual(a, b[i]!)) return true;
  return false;
}

export interface InfixOp {
  readonly build: Builder;
  readonly prec: number;
}

/** The binary operators with gval's precedences; `?` (ternary) is handled by the parser. */
export const INFIX = new Map<string, InfixOp>([
  ["??", { prec: 0, build: infix("??", { shortCircuit: (a) => !isZero(a), arbitrary: (a, b) => (isZero(a) ? b : a) }) }],
  ["||", { prec: 20, build: or }],
  ["&&", { prec: 21, build: and }],
  ["==", { prec: 40, build: infix("==", { number: (a, b) => a === b, bool: (a, b) => a === b, arbitrary: strictEqual }) }],
  ["!=", { prec: 40, build: infix("!=", { number: (a, b) => a !== b, bool: (a, b) => a !== b, arbitrary: (a, b) => !strictEqual(a, b) }) }],
  [">", { prec: 40, build: infix(">", { number: (a, b) => a > b, text: (a, b) => compareBytewise(a, b) > 0 }) }],
  [">=", { prec: 40, build: infix(">=", { number: (a, b) => a >= b, text: (a, b) => compareBytewise(a, b) >= 0 }) }],
  ["<", { prec: 40, build: infix("<", { number: (a, b) => a < b, text: (a, b) => compareBytewise(a, b) < 0 }) }],
  ["<=", { prec: 40, build: infix("<=", { number: (a, b) => a <= b, text: (a, b) => compareBytewise(a, b) <= 0 }) }],
  ["=~", { prec: 40, build: regexOp(false) }],
  ["!~", { prec: 40, build: regexOp(true) }],
  ["in", { prec: 40, build: infix("in", { arbitrary: inArray }) }],
  ["^", { prec: 60, build: infix("^", { number: (a, b) => fromInt64(toInt64(a) ^ toInt64(b)) }) }],
  ["&", { prec: 60, build: infix("&", { number: (a, b) => fromInt64(toInt64(a) & toInt64(b)) }) }],
  ["|", { prec: 60, build: infix("|", { number: (a, b) => fromInt64(toInt64(a) | toInt64(b)) }) }],
  ["<<", { prec: 90, build: infix("<<", { number: (a, b) => {
    const s = shiftCount(b);
    return s === undefined ? 0 : fromInt64(toInt64(a) << s);
  } }) }],
  [">>", { prec: 90, build: infix(">>", { number: (a, b) => {
    const s = shiftCount(b);
    const x = toInt64(a);
    return s === undefined ? (x < 0n ? -1 : 0) : fromInt64(x >> s);
  } }) }],
  ["+", { prec: 120, build: infix("+", { number: (a, b) => a + b, text: (a, b) => a + b }) }],
  ["-", { prec: 120, build: infix("-", { number: (a, b) => a - b }) }],
  ["*", { prec: 150, build: infix("*", { number: (a, b) => a * b }) }],
  ["/", { prec: 150, build: infix("/", { number: (a, b) => a / b }) }],
  ["%", { prec: 150, build: infix("%", { number: (a, b) => a % b }) }],
  ["**", { prec: 200, build: infix("**", { number: goPow }) }],
]);

/** Precedence of the postfix ternary `cond ? a : b`. */
export const TERNARY_PREC = 10;

/** Every operator name, for gval's "is this a prefix of an operator" test. */
export const OPERATOR_NAMES: readonly string[] = [...INFIX.keys(), "?"];

/** Prefix operators `-`, `~`, `!` applied to the next operand. */
export function prefixOp(op: number, v: Value): Value {
  if (op === 33) {
    const b = toBool(v);
    if (b === undefined) throw new RowError(`unexpected ${goType(v)} expected bool`);
    return !b;
  }
  const f = toFloat(v);
  if (f === undefined) throw new RowError(`unexpected ${fmtV(v)}(${goType(v)}) expected number`);
  return op === 45 ? -f : fromInt64(~toInt64(f));
}
