/**
 * Window planning decisions (windows §1.2, §6, §9): which evaluator a windowed aggregate query
 * uses, and the aggregate calls an incremental window accumulates.
 *
 * floe evaluates a window incrementally — one accumulator per group per aggregate call, rows
 * never kept — when nothing downstream needs the rows:
 *   - the window is TUMBLING, HOPPING, SESSION or COUNT (sliding windows re-read the rows of
 *     every trigger, state windows are never aggregated per group);
 *   - no JOIN (joins pair rows), no aggregate in WHERE (computed over the whole window);
 *   - the query is an aggregate query (per-row projections emit the rows);
 *   - every aggregate call in SELECT, HAVING and ORDER BY has an accumulator (count, sum, avg,
 *     min, max, collect, merge_agg, last_value);
 *   - no window_start()/window_end()/window_trigger() in an aggregate argument, a GROUP BY
 *     expression or a WHERE that runs after the window: those are evaluated per row, before
 *     the window's range exists.
 * Non-aggregated columns, `*`, HAVING and ORDER BY read the group's first row: each group keeps
 * the columns of it they read (`groupColumns`), or the whole row when that cannot be bounded. The
 * choice never changes results; the rule option `windowEvaluator: "buffered"`
 * forces the buffered evaluator (equivalence tests, diagnosis).
 */
import type { BoundField } from "../sql/render.ts";
import type { Call, Expr } from "../sql/ast.ts";
import { children, some, walk } from "../sql/walk.ts";
import { isAggregateCall, type Analysis } from "./analyze.ts";
import type { RulePlan } from "./specs.ts";

export type WindowEvaluator = "buffered" | "incremental";

const RANGE_FUNCS = new Set(["window_start", "window_end", "window_trigger"]);
/** eKuiper's inc_agg_window rewrite targets (windows §9). */
const EKUIPER_INC = new Set(["count", "avg", "max", "min", "sum", "merge_agg", "collect", "last_value"]);

/** The aggregate calls of SELECT, HAVING and ORDER BY (through aliases), each once, in order. */
export function aggregateCalls(a: Analysis): Call[] {
  const s = a.stmt;
  const out: Call[] = [];
  const isAgg = isAggregateCall(a.functions);
  const visit = (e: Expr): void =>
    walk(e, (n) => {
      if (isAgg(n) && !out.includes(n)) out.push(n);
      const alias = n.kind === "field" ? (n as BoundField).aliasOf : undefined;
      if (alias) visit(alias);
    });
  for (const f of s.fields) visit(f.expr);
  if (s.having) visit(s.having);
  for (const o of s.orderBy) visit(o.expr);
  return out;
}

function usesRange(e: Expr): boolean {
  return some(
    e,
    (n) => (n.kind === "call" && RANGE_FUNCS.has(n.name)) || (n.kind === "field" && !!(n as BoundField).aliasOf && usesRange((n as BoundField).aliasOf!)),
  );
}

/**
 * floe's choice for a windowed rule (see the file comment); `whereAfterWindow` tells whether WHERE
 * runs after the window (count windows, event time).
 */
export function chooseEvaluator(a: Analysis, calls: readonly Call[], eventTime: boolean, whereAfterWindow: boolean): WindowEvaluator {
  const w = a.window;
  const s = a.stmt;
  if (!w || w.type === "sliding" || w.type === "state") return "buffered";
  if (s.joins.length || a.whereAggregates.length || !a.aggregate) return "buffered";
  if (eventTime && w.type === "count") return "buffered";
  for (const c of calls) {
    if (!a.functions.lookup(c.name)?.accumulator) return "buffered";
    if (c.args.some(usesRange)) return "buffered";
  }
  if (a.dimensions.some(usesRange)) return "buffered";
  if (whereAfterWindow && s.where && usesRange(s.where)) return "buffered";
  if (w.filter && some(w.filter, isAggregateCall(a.functions))) return "buffered";
  return "incremental";
}

/**
 * eKuiper's opt-in `<n>_inc_agg_window` (windows §9, rule option
 * `planOptimizeStrategy.enableIncrementalWindow`): tumbling, hopping or COUNTWINDOW(n), no JOIN,
 * every aggregate one of eKuiper's `inc_*` rewrites. floe runs it on its incremental evaluator
 * with eKuiper's observable differences; sliding windows stay on the normal path (divergence:
 * floe has no incremental sliding window).
 */
export function ekuiperIncremental(a: Analysis, calls: readonly Call[]): boolean {
  const w = a.window;
  const s = a.stmt;
  if (!w || s.joins.length || a.whereAggregates.length || !a.aggregate) return false;
  if (!(w.type === "tumbling" || w.type === "hopping" || (w.type === "count" && w.call.args.length === 1))) return false;
  if (a.dimensions.some(usesRange)) return false;
  return calls.every((c) => EKUIPER_INC.has(c.name) && !c.args.some(usesRange));
}

/**
 * The columns an incremental window's groups read of their first row (IncSpec.keep): every column
 * SELECT, HAVING and ORDER BY name outside aggregate calls (whose arguments are evaluated per row,
 * into the accumulators), in order of appearance. Null — the group keeps its whole first row —
 * whenever the analysis cannot bound what is read: `*`, meta()/mqtt(), analytic or window
 * functions (they read the row's cache), a function it does not know, eKuiper's inc_agg_window
 * (its WHERE filters the groups, its row is the last one), or case-insensitive names (a name
 * matches columns the analysis cannot list).
 */
export function groupColumns(a: Analysis, ekuiper: boolean, ignoreCase: boolean): string[] | null {
  if (ekuiper || ignoreCase || a.analytic.length || a.windowFuncs.length || a.whereAggregates.length) return null;
  const s = a.stmt;
  const isAgg: (e: Expr) => boolean = isAggregateCall(a.functions);
  const cols: string[] = [];
  let whole = false;
  const visit = (e: Expr): void => {
    if (whole || isAgg(e)) return;
    if (e.kind === "wildcard" || e.kind === "meta") {
      whole = true;
      return;
    }
    if (e.kind === "field") {
      const f = e as BoundField;
      if (f.aliasOf) visit(f.aliasOf);
      else if (!cols.includes(f.name)) cols.push(f.name);
      return;
    }
    if (e.kind === "call") {
      const kind = a.functions.kind(e.name);
      // Scalars (and set-returning, changed_cols, window_start() …) see only their arguments.
      if (kind !== "scalar" && kind !== "srf" && kind !== "multi" && kind !== "special") {
        whole = true;
        return;
      }
    }
    for (const c of children(e)) visit(c);
  };
  for (const f of s.fields) visit(f.expr);
  if (s.having) visit(s.having);
  for (const o of s.orderBy) visit(o.expr);
  return whole ? null : cols;
}

/**
 * The evaluator a planned rule's window runs on, for `explain` and diagnostics: the window
 * operator's name (`3_window`, or eKuiper's `3_inc_agg_window`) and "incremental" or "buffered".
 */
export function windowEvaluatorOf(plan: RulePlan): { op: string; evaluator: WindowEvaluator } | undefined {
  for (const op of plan.ops) if (op.kind === "window") return { op: op.name, evaluator: op.inc ? "incremental" : "buffered" };
  return undefined;
}
