/**
 * Two-stage aggregation of a partitioned rule whose GROUP BY is not the partition key
 * (docs/group.md, "Two-stage aggregation"): stage 1 runs per partition and emits, at each window
 * close, one partial row per GROUP BY key; stage 2 merges the partials of every partition by key
 * and window, then applies HAVING, the projection, ORDER BY and LIMIT as the single rule would.
 *
 * Both stages are ordinary SELECTs planned by the usual planner: stage 1 is the rule's FROM,
 * WHERE and GROUP BY selecting the keys, the partial aggregates `__a<i>`, `window_start() AS __ws`
 * and `window_end() AS __we`; stage 2 reads one row per (partition, key, window) — and marker rows
 * (`__t` = 1) that only move its watermark — and replaces each aggregate by its merge.
 */
import type { BinaryOp, Call, Expr, Field, SelectStatement } from "../sql/ast.ts";
import { renderExpr } from "../sql/render.ts";
import { children, mapExpr, some } from "../sql/walk.ts";
import { isAnalyticCall } from "./analyze.ts";
import { extractWindow } from "./window-spec.ts";

/** The partial rows' columns (stage 1's output, stage 2's input). */
export const PARTIAL_START = "__ws";
export const PARTIAL_END = "__we";
/**
 * Stage 2's timestamp: the earliest start among a window's partials (a partition's first window
 * starts at its first row [quirk], the rule's first window at the first row of all), the same on
 * every row of the window so that none is late to the others; a marker's is the window's end.
 */
export const PARTIAL_TS = "__ts";
/** 0 on a partial row, 1 on a marker row that moves stage 2's watermark. */
export const PARTIAL_MARK = "__t";

export interface TwoStagePlan {
  /** Per partition: GROUP BY keys, partial aggregates, window bounds. */
  readonly stage1: SelectStatement;
  /** The merge, reading the stream of the same name: the rule's projection over merged partials. */
  readonly stage2: SelectStatement;
  /** Window length, ms (stage 2's marker after a window is released sits at its end). */
  readonly length: number;
}

/** How an aggregate's partials merge: stage 1 computes `partial`, stage 2 folds it with `merge`. */
const MERGE: Record<string, { partial: string; merge: string }[]> = {
  count: [{ partial: "count", merge: "sum" }],
  sum: [{ partial: "sum", merge: "sum" }],
  min: [{ partial: "min", merge: "min" }],
  max: [{ partial: "max", merge: "max" }],
  // avg = sum / count: int / int truncates as avg of ints does, float / int divides as avg of floats.
  avg: [
    { partial: "sum", merge: "sum" },
    { partial: "count", merge: "sum" },
  ],
};

const field = (name: string): Expr => ({ kind: "field", name });
const call = (name: string, args: Expr[]): Call => ({ kind: "call", name, args });
const col = (name: string, expr: Expr): Field => ({ expr, name, alias: name, invisible: false });

/**
 * Splits `s` into two stages, or says why it cannot be (the rule then runs per partition, each
 * computing its own groups). `undefined` when no split is needed: no GROUP BY key, or the
 * partition key is one of them. `isAggregate` tells an aggregate function by name.
 */
export function planTwoStage(
  s: SelectStatement,
  partitionKey: string,
  eventTime: boolean,
  isAggregate: (e: Expr) => boolean,
): { plan: TwoStagePlan } | { reason: string } | undefined {
  let w: ReturnType<typeof extractWindow>;
  try {
    w = extractWindow(s.groupBy);
  } catch {
    return undefined;
  }
  const dims = w.dimensions;
  if (!partitionKey || dims.length === 0) return undefined;
  const key = partitionKey.toLowerCase();
  if (dims.some((d) => d.kind === "field" && d.name.toLowerCase() === key)) return undefined;
  if (s.joins.length > 0) return { reason: "it joins" };
  if (!w.window) return { reason: "it has no window" };
  if (w.window.type !== "tumbling") return { reason: `${w.window.call.name.toUpperCase()} is not split (only TUMBLINGWINDOW is)` };
  if (w.window.filter) return { reason: "its window has a FILTER clause" };
  if (!eventTime) return { reason: "it runs in processing time (each partition closes its windows on its own member's clock, so a merge cannot tell an empty partition from a late one)" };
  const keys: string[] = [];
  for (const d of dims) {
    if (d.kind !== "field") return { reason: `its GROUP BY key ${renderExpr(d)} is not a column` };
    keys.push(d.name);
  }
  const names = new Set(keys.map((k) => k.toLowerCase()));

  // Stage 1's partial aggregates, one per distinct (partial function, argument).
  const partials: Field[] = [];
  const byText = new Map<string, string>();
  const partialOf = (fn: string, c: Call): string => {
    const p = call(fn, c.args);
    const text = renderExpr(p);
    let name = byText.get(text);
    if (name === undefined) {
      name = `__a${partials.length}`;
      byText.set(text, name);
      partials.push(col(name, p));
    }
    return name;
  };
  let refusal: string | undefined;
  const merged = (e: Expr): Expr => {
    if (e.kind !== "call" || !isAggregate(e)) return e;
    const how = MERGE[e.name];
    if (!how) return (refusal ??= `${e.name}() is not decomposable into partial aggregates`), e;
    if (e.filter || e.over) return (refusal ??= `${e.name}() has a FILTER or OVER clause`), e;
    if (e.args.length !== 1 || (e.name !== "count" && e.args[0]!.kind === "wildcard")) return (refusal ??= `${e.name}() does not take one argument`), e;
    if (some(e.args[0]!, (x) => isAggregate(x))) return (refusal ??= `${e.name}() nests an aggregate`), e;
    const parts = how.map((h) => call(h.merge, [field(partialOf(h.partial, e))]));
    if (parts.length === 1) return parts[0]!;
    return { kind: "paren", expr: { kind: "binary", op: "/" as BinaryOp, left: parts[0]!, right: parts[1]! } };
  };
  // Outside aggregates only the GROUP BY keys and the window's functions can be read.
  const outside = (e: Expr): string | undefined => {
    if (isAggregate(e)) return undefined;
    if (e.kind === "wildcard") return "it selects *";
    if (e.kind === "meta") return "it reads metadata outside an aggregate";
    if (e.kind === "field" && !names.has(e.name.toLowerCase())) return `it reads ${e.name} outside an aggregate and the GROUP BY keys`;
    if (e.kind === "call" && (e.over || isAnalyticCall(e))) return `${e.name}() is an analytic function`;
    for (const c of children(e)) {
      const r = outside(c);
      if (r) return r;
    }
    return undefined;
  };
  for (const f of s.fields) {
    const r = outside(f.expr);
    if (r) return { reason: r };
  }
  // HAVING and ORDER BY may also name the select list's columns.
  for (const f of s.fields) names.add(f.name.toLowerCase());
  for (const e of [...(s.having ? [s.having] : []), ...s.orderBy.map((o) => o.expr)]) {
    const r = outside(e);
    if (r) return { reason: r };
  }
  const map = (e: Expr) => mapExpr(e, merged);
  const stage2: SelectStatement = {
    ...s,
    fields: s.fields.map((f) => ({ ...f, expr: map(f.expr) })),
    where: { kind: "binary", op: "=", left: field(PARTIAL_MARK), right: { kind: "integer", value: 0n } },
    having: s.having && map(s.having),
    orderBy: s.orderBy.map((o) => ({ ...o, expr: map(o.expr) })),
    groupBy: [...dims.map((d) => ({ ...d })), w.window.call],
  };
  if (refusal) return { reason: refusal };
  const stage1: SelectStatement = {
    kind: "select",
    fields: [
      ...keys.map((k) => col(k, field(k))),
      ...partials,
      col(PARTIAL_START, call("window_start", [])),
      col(PARTIAL_END, call("window_end", [])),
    ],
    from: s.from,
    joins: [],
    where: s.where,
    groupBy: s.groupBy,
    orderBy: [],
    semicolon: s.semicolon,
  };
  // Each stage is analyzed (bound in place) by its own runs: neither shares a node with the rule's SELECT or the other stage.
  return { plan: { stage1: unbound(stage1), stage2: unbound(stage2), length: w.window.length } };
}

/** A deep copy without the analyzer's bindings (`bound`, `aliasOf` of field references). */
function unbound<T>(x: T): T {
  if (x === null || typeof x !== "object") return x;
  if (Array.isArray(x)) return x.map(unbound) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) if (k !== "bound" && k !== "aliasOf") out[k] = unbound(v);
  return out as T;
}

