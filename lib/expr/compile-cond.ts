/** CASE, IN, BETWEEN and LIKE (sql §7.7–7.10), with eKuiper's error wrapping. */
import { RowError } from "../errors.ts";
import { compileLikePattern, type GoRegex } from "../functions/regex/index.ts";
import type { Between, Case, In, Like } from "../sql/ast.ts";
import { compileExpr, type Evaluator, type Scope } from "./compile.ts";
import { checkLeft, compare, equals } from "./ops.ts";
import { fmtV, typeValue } from "../value/values.ts";

function wrap(prefix: string, e: unknown): unknown {
  return e instanceof RowError ? new RowError(prefix + e.message) : e;
}

export function compileCase(e: Case, scope: Scope): Evaluator {
  const value = e.value ? compileExpr(e.value, scope) : undefined;
  const conds = e.whens.map((w) => compileExpr(w.cond, scope));
  const results = e.whens.map((w) => compileExpr(w.result, scope));
  const otherwise = e.else ? compileExpr(e.else, scope) : () => null;
  const n = conds.length;
  if (value) {
    return (row, ctx) => {
      const v = value(row, ctx);
      for (let i = 0; i < n; i++) {
        let hit: boolean;
        try {
          hit = equals(v, conds[i]!(row, ctx));
        } catch (err) {
          throw wrap("evaluate case expression error: ", err);
        }
        if (hit) return results[i]!(row, ctx);
      }
      return otherwise(row, ctx);
    };
  }
  return (row, ctx) => {
    for (let i = 0; i < n; i++) {
      let c;
      try {
        c = conds[i]!(row, ctx);
      } catch (err) {
        throw wrap("evaluate case expression error: ", err);
      }
      if (c === true) return results[i]!(row, ctx);
    }
    return otherwise(row, ctx);
  };
}

export function compileIn(e: In, scope: Scope): Evaluator {
  const left = compileExpr(e.left, scope);
  const op = e.not ? "NOT IN" : "IN";
  const not = e.not;
  const list = e.list?.map((x) => compileExpr(x, scope));
  const set = e.set ? compileExpr(e.set, scope) : undefined;
  return (row, ctx) => {
    const x = left(row, ctx);
    checkLeft(x, op);
    let values;
    if (list) {
      values = new Array(list.length);
      for (let i = 0; i < list.length; i++) values[i] = list[i]!(row, ctx);
    } else {
      values = set!(row, ctx);
      if (!Array.isArray(values)) return not;
    }
    // [quirk] a null left side is false for IN and NOT IN alike.
    if (x === null) return false;
    for (const v of values) {
      let hit: boolean;
      try {
        hit = equals(x, v);
      } catch (err) {
        throw wrap("evaluate in expression error: ", err);
      }
      if (hit) return !not;
    }
    return not;
  };
}

export function compileBetween(e: Between, scope: Scope): Evaluator {
  const left = compileExpr(e.left, scope);
  const low = compileExpr(e.low, scope);
  const high = compileExpr(e.high, scope);
  const op = e.not ? "NOT BETWEEN" : "BETWEEN";
  const not = e.not;
  return (row, ctx) => {
    const x = left(row, ctx);
    checkLeft(x, op);
    const lo = low(row, ctx);
    const hi = high(row, ctx);
    if (x === null || lo === null || hi === null) return false;
    let inside: boolean;
    try {
      inside = compare(">=", x, lo);
    } catch {
      throw new RowError(`between operator cannot compare ${typeValue(x)} and ${typeValue(lo)}`);
    }
    try {
      inside = compare("<=", x, hi) && inside;
    } catch {
      throw new RowError(`between operator cannot compare ${typeValue(x)} and ${typeValue(hi)}`);
    }
    return not ? !inside : inside;
  };
}

export function compileLike(e: Like, scope: Scope): Evaluator {
  const left = compileExpr(e.left, scope);
  const op = e.not ? "NOT LIKE" : "LIKE";
  const not = e.not;
  let pattern: (row: Parameters<Evaluator>[0], ctx: Parameters<Evaluator>[1]) => GoRegex;
  if (e.pattern.kind === "string") {
    const re = compileLikePattern(e.pattern.value);
    pattern = () => re;
  } else {
    const p = compileExpr(e.pattern, scope);
    pattern = (row, ctx) => {
      const v = p(row, ctx);
      if (typeof v !== "string") throw new RowError(`invalid LIKE pattern, must be a string but got ${fmtV(v)}`);
      return compileLikePattern(v);
    };
  }
  return (row, ctx) => {
    const x = left(row, ctx);
    checkLeft(x, op);
    const re = pattern(row, ctx);
    if (typeof x !== "string") throw new RowError(`LIKE operator left operand expects string, but found ${fmtV(x)}`);
    return re.test(x) !== not;
  };
}
