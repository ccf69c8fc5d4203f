/** Generic traversal of expression trees (post-order: children before the node, left to right). */
import type { Expr, Field, SelectStatement } from "./ast.ts";

/** Direct children of an expression, in textual order. */
export function children(e: Expr): Expr[] {
  switch (e.kind) {
    case "binary":
      return [e.left, e.right];
    case "arrow":
      // The right side is a key name, not an expression of the row.
      return [e.left];
    case "index":
      return [e.left, e.index];
    case "slice": {
      const out: Expr[] = [e.left];
      if (e.start) out.push(e.start);
      if (e.end) out.push(e.end);
      return out;
    }
    case "paren":
      return [e.expr];
    case "in":
      return e.list ? [e.left, ...e.list] : [e.left, e.set!];
    case "between":
      return [e.left, e.low, e.high];
    case "like":
      return [e.left, e.pattern];
    case "case": {
      const out: Expr[] = e.value ? [e.value] : [];
      for (const w of e.whens) out.push(w.cond, w.result);
      if (e.else) out.push(e.else);
      return out;
    }
    case "call": {
      const out = [...e.args];
      if (e.filter) out.push(e.filter);
      if (e.over) {
        out.push(...e.over.partition);
        if (e.over.when) out.push(e.over.when);
        for (const s of e.over.orderBy) out.push(s.expr);
      }
      return out;
    }
    case "wildcard":
      return e.replace.map((f) => f.expr);
    default:
      return [];
  }
}

/** Visits `e` and every descendant, children first. */
export function walk(e: Expr, visit: (e: Expr) => void): void {
  for (const c of children(e)) walk(c, visit);
  visit(e);
}

/** True if `pred` holds for `e` or any descendant. */
export function some(e: Expr, pred: (e: Expr) => boolean): boolean {
  if (pred(e)) return true;
  for (const c of children(e)) if (some(c, pred)) return true;
  return false;
}

/** Rebuilds `e` bottom-up, replacing each node by `fn(node)` (children already mapped). */
export function mapExpr(e: Expr, fn: (e: Expr) => Expr): Expr {
  let out: Expr;
  switch (e.kind) {
    case "binary":
      out = { ...e, left: mapExpr(e.left, fn), right: mapExpr(e.right, fn) };
      break;
    case "arrow":
      out = { ...e, left: mapExpr(e.left, fn), right: e.right };
      break;
    case "index":
      out = { ...e, left: mapExpr(e.left, fn), index: mapExpr(e.index, fn) };
      break;
    case "slice":
      out = {
        ...e,
        left: mapExpr(e.left, fn),
        start: e.start && mapExpr(e.start, fn),
        end: e.end && mapExpr(e.end, fn),
      };
      break;
    case "paren":
      out = { ...e, expr: mapExpr(e.expr, fn) };
      break;
    case "in":
      out = {
        ...e,
        left: mapExpr(e.left, fn),
        list: e.list?.map((x) => mapExpr(x, fn)),
        set: e.set && mapExpr(e.set, fn),
      };
      break;
    case "between":
      out = { ...e, left: mapExpr(e.left, fn), low: mapExpr(e.low, fn), high: mapExpr(e.high, fn) };
      break;
    case "like":
      out = { ...e, left: mapExpr(e.left, fn), pattern: mapExpr(e.pattern, fn) };
      break;
    case "case":
      out = {
        ...e,
        value: e.value && mapExpr(e.value, fn),
        whens: e.whens.map((w) => ({ cond: mapExpr(w.cond, fn), result: mapExpr(w.result, fn) })),
        else: e.else && mapExpr(e.else, fn),
      };
      break;
    case "call":
      out = {
        ...e,
        args: e.args.map((a) => mapExpr(a, fn)),
        filter: e.filter && mapExpr(e.filter, fn),
        over: e.over && {
          partition: e.over.partition.map((p) => mapExpr(p, fn)),
          when: e.over.when && mapExpr(e.over.when, fn),
          orderBy: e.over.orderBy.map((s) => ({ ...s, expr: mapExpr(s.expr, fn) })),
        },
      };
      break;
    case "wildcard":
      out = { ...e, replace: e.replace.map((f) => ({ ...f, expr: mapExpr(f.expr, fn) })) };
      break;
    default:
      out = e;
  }
  return fn(out);
}

/** Every expression of a SELECT outside its select list, in clause order. */
export function clauseExprs(s: SelectStatement): Expr[] {
  const out: Expr[] = [];
  for (const j of s.joins) if (j.on) out.push(j.on);
  if (s.where) out.push(s.where);
  out.push(...s.groupBy);
  if (s.having) out.push(s.having);
  for (const o of s.orderBy) out.push(o.expr);
  return out;
}

/** Applies `fn` to every expression of the statement (fields, then the other clauses). */
export function mapSelect(s: SelectStatement, fn: (e: Expr) => Expr): SelectStatement {
  const mapField = (f: Field): Field => ({ ...f, expr: fn(f.expr) });
  return {
    ...s,
    fields: s.fields.map(mapField),
    joins: s.joins.map((j) => ({ ...j, on: j.on && fn(j.on) })),
    where: s.where && fn(s.where),
    groupBy: s.groupBy.map(fn),
    having: s.having && fn(s.having),
    orderBy: s.orderBy.map((o) => ({ ...o, expr: fn(o.expr) })),
  };
}
