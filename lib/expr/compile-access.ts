/** JSON navigation (sql §8): `->`, `[i]`, `[s:e]`, and metadata references (sql §16). */
import { RowError } from "../errors.ts";
import type { Arrow, Index, MetaRef, Slice } from "../sql/ast.ts";
import { renderExpr } from "../sql/render.ts";
import { compileExpr, type Evaluator, type Scope } from "./compile.ts";
import { invalidOp } from "./ops.ts";
import { isObj, toIntSame, typeValue, type Value } from "../value/values.ts";

export function compileMeta(e: MetaRef): Evaluator {
  const name = e.name;
  const stream = e.stream;
  if (name === "*") return (row) => row.metadata(stream);
  return (row) => {
    const v = row.metadata(stream)[name];
    return v === undefined ? null : v;
  };
}

export function compileArrow(e: Arrow, scope: Scope): Evaluator {
  const left = compileExpr(e.left, scope);
  if (e.right.kind !== "field") {
    return (row, ctx) => {
      left(row, ctx);
      throw new RowError("the right expression is not a field reference node");
    };
  }
  const name = e.right.name;
  return (row, ctx) => {
    const l = left(row, ctx);
    if (l === null) return null;
    if (isObj(l)) {
      const v = l[name];
      return v === undefined ? null : v;
    }
    if (Array.isArray(l)) throw new RowError("-> is an invalid operation for []interface {}");
    // [quirk] on a scalar, the right side is read as a column of the current row.
    const r = row.value(name, undefined);
    if (r === null) return null;
    throw invalidOp(l, "->", r);
  };
}

/** Reads `[i]` / `[s:e]` bounds: `toIntSame`, with eKuiper's wrapping of conversion errors. */
function bound(ev: Evaluator, what: string, text: string): Evaluator {
  return (row, ctx) => {
    const v = ev(row, ctx);
    try {
      return toIntSame(v);
    } catch (err) {
      throw new RowError(`${what} ${text} is not int: ${(err as RowError).message}`);
    }
  };
}

export function compileIndex(e: Index, scope: Scope): Evaluator {
  const left = compileExpr(e.left, scope);
  const index = bound(compileExpr(e.index, scope), "index", renderExpr(e.index));
  return (row, ctx) => {
    const l = left(row, ctx);
    if (isObj(l)) throw new RowError("[] is an invalid operation for map[string]interface {}");
    const i = index(row, ctx) as bigint;
    if (l === null) return null;
    if (!Array.isArray(l)) throw scalarBracket(l, i, i);
    return element(l, i);
  };
}

/** A bracket on a scalar; the bracket prints as Go's `%T(%v)` of eKuiper's bracket result. */
function scalarBracket(l: Value, s: bigint, e: bigint): RowError {
  return new RowError(`invalid operation ${typeValue(l)} [] *xsql.BracketEvalResult(&{${s} ${e}})`);
}

function element(l: Value[], i: bigint): Value {
  const n = BigInt(l.length);
  let k = i;
  if (k < 0n) k += n;
  if (k < 0n || k >= n) throw new RowError(`out of index: ${i} of ${n}`);
  return l[Number(k)]!;
}

const OPEN_END = -2147483648n;

export function compileSlice(e: Slice, scope: Scope): Evaluator {
  const left = compileExpr(e.left, scope);
  const start = e.start ? bound(compileExpr(e.start, scope), "colon start", renderExpr(e.start)) : () => 0n;
  const end = e.end ? bound(compileExpr(e.end, scope), "colon end", renderExpr(e.end)) : undefined;
  return (row, ctx) => {
    const l = left(row, ctx);
    if (isObj(l)) throw new RowError("[] is an invalid operation for map[string]interface {}");
    const s = start(row, ctx) as bigint;
    const en = end ? (end(row, ctx) as bigint) : undefined;
    if (l === null) return null;
    if (!Array.isArray(l)) throw scalarBracket(l, s, en ?? OPEN_END);
    // [quirk] equal bounds are an index, even when computed.
    if (en !== undefined && en === s) return element(l, s);
    return slice(l, s, en);
  };
}

function slice(l: Value[], s0: bigint, e0: bigint | undefined): Value[] {
  const n = BigInt(l.length);
  let s = s0;
  if (s < 0n) s += n;
  if (s < 0n) throw new RowError(`out of index: ${s0} of ${n}`);
  if (s >= n) throw new RowError(`start value is out of index: ${s0} of ${n}`);
  let e = n;
  if (e0 !== undefined) {
    if (e0 < 0n) {
      e = e0 + n;
      if (e < 0n) throw new RowError(`out of index: ${e0} of ${n}`);
    } else {
      if (e0 > n) throw new RowError(`end value is out of index: ${e0} of ${n}`);
      e = e0;
    }
  }
  if (s > e || (e0 !== undefined && e0 >= 0n && s >= e))
    throw new RowError(`start cannot be greater than end. start:${s}  end:${e}`);
  return l.slice(Number(s), Number(e));
}
