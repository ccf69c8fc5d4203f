/**
 * AST → closures, once per rule (STYLE: compile once, run many). An `Evaluator` returns the
 * value of an expression for one row and throws RowError on failure; the operator that runs it
 * catches once per record. Binding information (stream, alias) comes from the analyzer.
 */
import type { FuncEnv, FunctionRegistry } from "../functions/registry.ts";
import type { Binary, Expr } from "../sql/ast.ts";
import type { BoundField } from "../sql/render.ts";
import { compileArrow, compileIndex, compileMeta, compileSlice } from "./compile-access.ts";
import { compileCall } from "./compile-call.ts";
import { compileBetween, compileCase, compileIn, compileLike } from "./compile-cond.ts";
import { arith, checkLeft, compare, invalidOp, type ArithOp, type CmpOp } from "./ops.ts";
import type { Hits } from "./hits.ts";
import type { EvalCtx, Row } from "./row.ts";
import type { Value } from "../value/values.ts";

export type Evaluator = (row: Row, ctx: EvalCtx) => Value;

/** What the compiler needs to know about where an expression runs. */
export interface Scope {
  readonly env: FuncEnv;
  /** The functions calls resolve to: the built-ins and the owner's UDFs. */
  readonly functions: FunctionRegistry;
  /** Aggregate context: aggregate calls iterate the group; failing scalar calls yield null. */
  readonly aggregate: boolean;
  /** Cache slot of each analytic / window-function call site, read from `Row.cached`. */
  readonly cachedCalls: Map<Expr, number>;
  /** Per-call-site state holders, keyed by AST node, shared by every compilation of that node. */
  readonly callState: Map<Expr, { state: unknown }>;
  /** Clause-mode state of the hit functions (functions §2). */
  readonly hits: Hits;
  /** `basic.ignoreCase`: column lookups fall back to a case-insensitive match. */
  readonly ignoreCase?: boolean;
  /** Incremental windows: aggregate call → its accumulator slot in an IncrementalGroup (windows §9). */
  readonly aggSlots?: ReadonlyMap<Expr, number>;
}

export function compileExpr(e: Expr, scope: Scope): Evaluator {
  switch (e.kind) {
    case "integer":
    case "number":
    case "string":
    case "boolean": {
      const v = e.value;
      return () => v;
    }
    case "timeUnit":
      return () => null;
    case "field":
      return compileField(e as BoundField, scope);
    case "wildcard": {
      const stream = e.stream;
      return (row) => row.all(stream);
    }
    case "meta":
      return compileMeta(e);
    case "paren":
      return compileExpr(e.expr, scope);
    case "binary":
      return compileBinary(e, scope);
    case "arrow":
      return compileArrow(e, scope);
    case "index":
      return compileIndex(e, scope);
    case "slice":
      return compileSlice(e, scope);
    case "case":
      return compileCase(e, scope);
    case "in":
      return compileIn(e, scope);
    case "between":
      return compileBetween(e, scope);
    case "like":
      return compileLike(e, scope);
    case "call":
      return compileCall(e, scope);
  }
}

function compileField(f: BoundField, scope: Scope): Evaluator {
  if (f.aliasOf) return compileExpr(f.aliasOf, scope);
  const name = f.name;
  const stream = f.bound;
  if (scope.ignoreCase) return (row) => row.valueFold(name, stream);
  return (row) => row.value(name, stream);
}

function compileBinary(e: Binary, scope: Scope): Evaluator {
  const left = compileExpr(e.left, scope);
  const right = compileExpr(e.right, scope);
  const op = e.op;
  switch (op) {
    case "AND":
      return (row, ctx) => {
        const l = left(row, ctx);
        checkLeft(l, op);
        if (l === false) return false;
        const r = right(row, ctx);
        if (l === null || r === null) return false;
        if (typeof l !== "boolean" || typeof r !== "boolean") throw invalidOp(l, op, r);
        return r;
      };
    case "OR":
      return (row, ctx) => {
        const l = left(row, ctx);
        checkLeft(l, op);
        if (l === true) return true;
        const r = right(row, ctx);
        if (l === null || r === null) return false;
        if (typeof l !== "boolean" || typeof r !== "boolean") throw invalidOp(l, op, r);
        return r;
      };
    case "=":
    case "!=":
    case "<":
    case "<=":
    case ">":
    case ">=":
      return compileCompare(op, left, right, e.right);
    default:
      return compileArith(op, left, right, e.right);
  }
}

/**
 * Comparisons compiled by operand type: two numbers (float64) compare natively — the
 * same answer `compare` gives them, NaN and -0 included — and everything else (int64, mixed,
 * strings, times, errors) takes the generic path.
 */
function compileCompare(op: CmpOp, left: Evaluator, right: Evaluator, rightAst: Expr): Evaluator {
  if (rightAst.kind === "number" && typeof rightAst.value === "number") {
    // A float literal on the right: only the left side is tested.
    const c = rightAst.value;
    const slow = (l: Value): boolean => {
      checkLeft(l, op);
      return compare(op, l, c);
    };
    switch (op) {
      case "=":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l === c : slow(l);
        };
      case "!=":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l !== c : slow(l);
        };
      case "<":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l < c : slow(l);
        };
      case "<=":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l <= c : slow(l);
        };
      case ">":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l > c : slow(l);
        };
      case ">=":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l >= c : slow(l);
        };
    }
  }
  const num = NUM_CMP[op];
  return (row, ctx) => {
    const l = left(row, ctx);
    if (typeof l === "number") {
      // checkLeft rejects only objects and arrays: nothing to check for a number.
      const r = right(row, ctx);
      return typeof r === "number" ? num(l, r) : compare(op, l, r);
    }
    checkLeft(l, op);
    return compare(op, l, right(row, ctx));
  };
}

const NUM_CMP: Record<CmpOp, (a: number, b: number) => boolean> = {
  "=": (a, b) => a === b,
  "!=": (a, b) => a !== b,
  "<": (a, b) => a < b,
  "<=": (a, b) => a <= b,
  ">": (a, b) => a > b,
  ">=": (a, b) => a >= b,
};

/**
 * Arithmetic compiled by operand type: + - * on two numbers (float64) is native;
 * / and % too unless the divisor is 0 (the generic path raises eKuiper's error); int64 (bigint)
 * and mixed operands take the generic path.
 */
function compileArith(op: ArithOp, left: Evaluator, right: Evaluator, rightAst: Expr): Evaluator {
  if (rightAst.kind === "number" && typeof rightAst.value === "number" && (op === "+" || op === "-" || op === "*" || ((op === "/" || op === "%") && rightAst.value !== 0))) {
    const c = rightAst.value;
    const slow = (l: Value): Value => {
      checkLeft(l, op);
      return arith(op, l, c);
    };
    switch (op) {
      case "+":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l + c : slow(l);
        };
      case "-":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l - c : slow(l);
        };
      case "*":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l * c : slow(l);
        };
      case "/":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l / c : slow(l);
        };
      case "%":
        return (row, ctx) => {
          const l = left(row, ctx);
          return typeof l === "number" ? l % c : slow(l);
        };
    }
  }
  const num = NUM_ARITH[op];
  if (num === undefined) {
    return (row, ctx) => {
      const l = left(row, ctx);
      checkLeft(l, op);
      return arith(op, l, right(row, ctx));
    };
  }
  return (row, ctx) => {
    const l = left(row, ctx);
    if (typeof l === "number") {
      const r = right(row, ctx);
      return typeof r === "number" && (r !== 0 || (op !== "/" && op !== "%")) ? num(l, r) : arith(op, l, r);
    }
    checkLeft(l, op);
    return arith(op, l, right(row, ctx));
  };
}

const NUM_ARITH: Partial<Record<ArithOp, (a: number, b: number) => number>> = {
  "+": (a, b) => a + b,
  "-": (a, b) => a - b,
  "*": (a, b) => a * b,
  "/": (a, b) => a / b,
  "%": (a, b) => a % b,
};
