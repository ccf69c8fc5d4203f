/**
 * Binary operator semantics (sql §7): Go-compatible arithmetic and comparison over the value
 * model, with eKuiper's null rules and exact error texts. Operands are already evaluated.
 */
import { RowError } from "../errors.ts";
import { DateTime, toTimeForCompare } from "../value/time.ts";
import { int64, isObj, typeValue, type Value } from "../value/values.ts";

export type ArithOp = "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^";
export type CmpOp = "=" | "!=" | "<" | "<=" | ">" | ">=";

export function invalidOp(l: Value, op: string, r: Value): RowError {
  return new RowError(`invalid operation ${typeValue(l)} ${op} ${typeValue(r)}`);
}

export const divByZero = () => new RowError("divided by zero");

/** The check eKuiper makes on the left operand before evaluating the right (sql §7.1). */
export function checkLeft(l: Value, op: string): void {
  if (typeof l === "object" && l !== null) {
    if (Array.isArray(l)) throw new RowError(`${op} is an invalid operation for []interface {}`);
    if (isObj(l)) throw new RowError(`${op} is an invalid operation for map[string]interface {}`);
  }
}

function intArith(op: ArithOp, l: bigint, r: bigint): bigint {
  switch (op) {
    case "+":
      return int64(l + r);
    case "-":
      return int64(l - r);
    case "*":
      return int64(l * r);
    case "/":
      if (r === 0n) throw divByZero();
      return int64(l / r);
    case "%":
      if (r === 0n) throw divByZero();
      return l % r;
    case "&":
      return l & r;
    case "|":
      return l | r;
    case "^":
      return l ^ r;
  }
}

function floatArith(op: ArithOp, l: number, r: number, lv: Value, rv: Value): number {
  switch (op) {
    case "+":
      return l + r;
    case "-":
      return l - r;
    case "*":
      return l * r;
    case "/":
      if (r === 0) throw divByZero();
      return l / r;
    case "%":
      if (r === 0) throw divByZero();
      return l % r;
    default:
      throw invalidOp(lv, op, rv);
  }
}

/** `l op r` for + - * / % & | ^ after both sides are evaluated (null → null). */
export function arith(op: ArithOp, l: Value, r: Value): Value {
  if (l === null || r === null) {
    // Bitwise operators on null are false, not null (sql §7.2).
    return op === "&" || op === "|" || op === "^" ? false : null;
  }
  const tl = typeof l;
  const tr = typeof r;
  if (tl === "bigint" && tr === "bigint") return intArith(op, l as bigint, r as bigint);
  if ((tl === "number" || tl === "bigint") && (tr === "number" || tr === "bigint"))
    return floatArith(op, Number(l), Number(r), l, r);
  if (tl === "boolean" && tr === "boolean") {
    if (op === "&") return (l as boolean) && (r as boolean);
    if (op === "|") return (l as boolean) || (r as boolean);
    if (op === "^") return l !== r;
  }
  throw invalidOp(l, op, r);
}

function order(op: CmpOp, c: number): boolean {
  switch (op) {
    case "=":
      return c === 0;
    case "!=":
      return c !== 0;
    case "<":
      return c < 0;
    case "<=":
      return c <= 0;
    case ">":
      return c > 0;
    case ">=":
      return c >= 0;
  }
}

/** `l op r` for comparisons (null → false). Numbers compare as Go float64 when mixed. */
export function compare(op: CmpOp, l: Value, r: Value): boolean {
  if (l === null || r === null) return false;
  const tl = typeof l;
  const tr = typeof r;
  if (tl === "number" || tl === "bigint") {
    if (tr !== "number" && tr !== "bigint") throw invalidOp(l, op, r);
    if (tl === tr) return order(op, l < r ? -1 : l > r ? 1 : l === r ? 0 : NaN);
    const a = Number(l);
    const b = Number(r);
    return order(op, a < b ? -1 : a > b ? 1 : a === b ? 0 : NaN);
  }
  if (tl === "string") {
    if (tr !== "string") throw invalidOp(l, op, r);
    return order(op, l < r ? -1 : l > r ? 1 : 0);
  }
  if (tl === "boolean") {
    if (tr !== "boolean" || (op !== "=" && op !== "!=")) throw invalidOp(l, op, r);
    return op === "=" ? l === r : l !== r;
  }
  if (l instanceof DateTime) {
    // Only a datetime on the left converts the right operand [quirk: asymmetric].
    const t = toTimeForCompare(r, l.zone);
    if (t === undefined) throw invalidOp(l, op, r);
    const c = l.ms - t.ms || l.ns - t.ns;
    return order(op, c < 0 ? -1 : c > 0 ? 1 : 0);
  }
  throw invalidOp(l, op, r);
}

/** `l AND r` / `l OR r` once both sides are evaluated (the short-circuit is the caller's). */
export function logic(op: "AND" | "OR", l: Value, r: Value): boolean {
  if (l === null || r === null) return false;
  if (typeof l !== "boolean" || typeof r !== "boolean") throw invalidOp(l, op, r);
  return op === "AND" ? l && r : l || r;
}

/** Evaluation of `=` for CASE and IN: true/false, errors thrown as in a comparison. */
export function equals(l: Value, r: Value): boolean {
  return compare("=", l, r);
}
