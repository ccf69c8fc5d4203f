/**
 * Comparisons and arithmetic compiled by operand type answer exactly what the generic
 * `compare` / `arith` of expr/ops.ts answer — values and error texts — for every pair of tricky
 * operands: floats with NaN, ±0 and ±Inf, int64 (bigint, small and beyond 2^53), mixed, strings,
 * booleans, null, objects and arrays; with a column or a float literal on the right.
 */
import { expect, test } from "bun:test";
import { compileExpr, type Scope } from "../../lib/expr/compile.ts";
import { arith, checkLeft, compare, type ArithOp, type CmpOp } from "../../lib/expr/ops.ts";
import { Tuple } from "../../lib/expr/row.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import type { Expr } from "../../lib/sql/ast.ts";
import type { Value } from "../../lib/value/values.ts";

const scope = { env: {}, functions: createFunctionRegistry(), aggregate: false, cachedCalls: new Map(), callState: new Map(), hits: {} } as unknown as Scope;

const VALUES: Value[] = [0, -0, 1.5, -2.25, 3, NaN, Infinity, -Infinity, 0n, 3n, -7n, 9007199254740993n, "a", "b", "", true, false, null, { x: 1 }, [1]];
const FLOAT_LITERALS = [0, -0, 2.5, -1, NaN, 3];
const CMP: CmpOp[] = ["=", "!=", "<", "<=", ">", ">="];
const ARITH: ArithOp[] = ["+", "-", "*", "/", "%", "&", "|", "^"];

function outcome(f: () => Value): string {
  try {
    const v = f();
    return typeof v === "bigint" ? `${v}n` : Object.is(v, -0) ? "-0" : String(v);
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

const field = (name: string): Expr => ({ kind: "field", name }) as Expr;

function check(op: CmpOp | ArithOp, generic: (l: Value, r: Value) => Value): void {
  const cols = compileExpr({ kind: "binary", op, left: field("a"), right: field("b") } as Expr, scope);
  for (const a of VALUES) {
    for (const b of VALUES) {
      const row = new Tuple({ a, b }, null, 0, "s");
      const want = outcome(() => {
        checkLeft(a, op);
        return generic(a, b);
      });
      expect(`${String(a)} ${op} ${String(b)} = ${outcome(() => cols(row, { window: null }))}`).toBe(`${String(a)} ${op} ${String(b)} = ${want}`);
    }
    for (const c of FLOAT_LITERALS) {
      const lit = compileExpr({ kind: "binary", op, left: field("a"), right: { kind: "number", value: c } } as Expr, scope);
      const row = new Tuple({ a }, null, 0, "s");
      const want = outcome(() => {
        checkLeft(a, op);
        return generic(a, c);
      });
      expect(`${String(a)} ${op} literal ${c} = ${outcome(() => lit(row, { window: null }))}`).toBe(`${String(a)} ${op} literal ${c} = ${want}`);
    }
  }
}

test("typed comparisons agree with the generic compare", () => {
  for (const op of CMP) check(op, (l, r) => compare(op, l, r));
});

test("typed arithmetic agrees with the generic arith (division by zero included)", () => {
  for (const op of ARITH) check(op, (l, r) => arith(op, l, r));
});
