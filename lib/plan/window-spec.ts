/** The window of a statement, extracted from GROUP BY (windows.md §1). Durations in ms. */
import { PlanError } from "../errors.ts";
import type { Evaluator } from "../expr/compile.ts";
import type { AccColumn, Accumulator, CallCtx, FuncDef } from "../functions/registry.ts";
import type { Call, Expr, TimeUnit } from "../sql/ast.ts";

export type WindowType = "tumbling" | "hopping" | "sliding" | "session" | "count" | "state";

export interface WindowSpec {
  readonly type: WindowType;
  readonly call: Call;
  /** Length (tumbling/hopping/sliding), max duration (session), n rows (count). */
  readonly length: number;
  /** Hop (hopping), timeout (session), m rows (count), delay (sliding); 0 when absent. */
  readonly interval: number;
  readonly unit: TimeUnit | undefined;
  /** `FILTER (WHERE …)`. */
  readonly filter?: Expr;
  /** `OVER (WHEN …)` trigger condition (sliding). */
  readonly trigger?: Expr;
  /** `OVER (PARTITION BY …)` (state window). */
  readonly partition: Expr[];
  /** State window conditions: begin and emit (one condition: both). */
  readonly begin?: Expr;
  readonly emit?: Expr;
}

export const UNIT_MS: Record<TimeUnit, number> = { MS: 1, SS: 1000, MI: 60_000, HH: 3_600_000, DD: 86_400_000 };

const TYPES: Record<string, WindowType> = {
  tumblingwindow: "tumbling",
  hoppingwindow: "hopping",
  slidingwindow: "sliding",
  sessionwindow: "session",
  countwindow: "count",
  statewindow: "state",
};

export function isWindowCall(e: Expr): e is Call {
  return e.kind === "call" && e.name in TYPES;
}

function int(e: Expr | undefined): number {
  return e && e.kind === "integer" ? Number(e.value) : 0;
}

export function extractWindow(groupBy: Expr[]): { window?: WindowSpec; dimensions: Expr[] } {
  const windows = groupBy.filter(isWindowCall);
  const dimensions = groupBy.filter((e) => !isWindowCall(e));
  if (windows.length > 1) throw new PlanError("only one window is allowed in GROUP BY");
  const call = windows[0];
  if (!call) return { dimensions };
  const type = TYPES[call.name]!;
  const a = call.args;
  const base = { type, call, filter: call.filter, trigger: call.over?.when, partition: call.over?.partition ?? [] };
  let spec: WindowSpec;
  if (type === "count") {
    const n = int(a[0]);
    spec = { ...base, unit: undefined, length: n, interval: a[1] ? int(a[1]) : n };
    if (a[1] && spec.interval <= 0) throw new PlanError(`invalid count window interval ${spec.interval}`);
  } else if (type === "state") {
    spec = { ...base, unit: undefined, length: 0, interval: 0, begin: a[0], emit: a[1] ?? a[0] };
  } else {
    const unit = (a[0] as { unit: TimeUnit }).unit;
    const ms = UNIT_MS[unit];
    spec = { ...base, unit, length: int(a[1]) * ms, interval: int(a[2]) * ms };
    if (spec.length <= 0) throw new PlanError(`invalid ${call.name} length ${int(a[1])}: it must be positive`);
    if ((type === "hopping" || type === "session") && spec.interval <= 0)
      throw new PlanError(`invalid ${call.name} interval ${int(a[2])}: it must be positive`);
  }
  return { window: spec, dimensions };
}

/** One aggregate call of an incremental window: its function, compiled arguments and call site. */
export interface IncAggSite {
  readonly def: FuncDef;
  /** Argument evaluators in row context. */
  readonly args: readonly Evaluator[];
  readonly ctx: CallCtx;
  /** eKuiper's `inc_*` rewrite (windows §9): a different accumulator (float sum/avg). */
  readonly accumulator: () => Accumulator;
  /** The aggregate's column over many groups (FuncDef.column), when it has one and is not eKuiper's rewrite. */
  readonly column?: () => AccColumn;
}

/**
 * How an incremental window aggregates (windows §9): per row it evaluates WHERE (when WHERE runs
 * after the window), the GROUP BY key and every aggregate's arguments, and folds the row into
 * one accumulator per group per aggregate call; rows are never kept.
 */
export interface IncSpec {
  /** Aggregate calls by slot (the planner's `aggSlots`). */
  readonly aggs: readonly IncAggSite[];
  /** GROUP BY expressions other than the window; none: the whole window is one group. */
  readonly dims: readonly Evaluator[];
  /** WHERE evaluated per row inside the window (count windows, event time), if any. */
  readonly where: Evaluator | undefined;
  /**
   * eKuiper's opt-in `inc_agg_window` (windows §9): non-aggregated columns from the last row,
   * WHERE filters the aggregated rows, windows without rows emit nothing.
   */
  readonly ekuiper: boolean;
  /**
   * The columns of its first row a group keeps (plan-window.ts groupColumns: those read outside
   * aggregate calls); null: the whole row. An absent spec field: the whole row.
   */
  readonly keep?: readonly string[] | null;
}
