/**
 * Predicate push-down (sql §13.2) as eKuiper's optimiser runs it over the logical plan
 * (DataSource → [Watermark] → [AnalyticFuncs] → [Window] → [JoinAlign] → Join → … → Filter): the
 * WHERE travels down from the top and each node keeps, passes or absorbs its conjuncts. The result
 * says where each part ends up; the planner only places and numbers the operators.
 */
import type { Expr } from "../sql/ast.ts";
import type { BoundField } from "../sql/render.ts";
import { walk } from "../sql/walk.ts";
import { andAll, conjuncts } from "./lookup.ts";
import type { Analysis } from "./analyze.ts";
import { isLookupTable } from "./streams.ts";

export interface PushedWhere {
  /** Per stream source: the conjuncts it owns, as a `<n>_filter` right after it and its helpers. */
  readonly sources: ReadonlyMap<string, Expr>;
  /** The window's pre-filter (`<n>_windowFilter`): its FILTER and what could not pass it. */
  readonly windowFilter: Expr | undefined;
  /** The first join's ON condition, with what an INNER join absorbed. */
  readonly on: Expr | undefined;
  /** The Filter after the joins (and lookups, agg_func). */
  readonly filter: Expr | undefined;
}

/** How the nodes below the joins take conditions. */
export interface PushContext {
  /** A processing-time tumbling, hopping or session window passes conditions to its input. */
  readonly windowPasses: boolean;
  /** An analytic or watermark node below the window stops every condition. */
  readonly stopped: boolean;
}

/** The sources a condition reads (through select aliases); `""` stands for an unbound column. */
function refSources(e: Expr): Set<string> {
  const out = new Set<string>();
  const visit = (x: Expr): void =>
    walk(x, (n) => {
      if (n.kind !== "field") return;
      const f = n as BoundField;
      if (f.aliasOf) visit(f.aliasOf);
      else out.add(f.bound ?? "");
    });
  visit(e);
  return out;
}

/** eKuiper's `extractCondition`: conjuncts reading at most one named source can be pushed down. */
function pushable(c: Expr): boolean {
  const refs = refSources(c);
  return refs.size === 0 || (refs.size === 1 && !refs.has(""));
}

/**
 * `where` is the WHERE the rest of the plan sees (lookups took theirs); `whereHasAgg` keeps it whole
 * after agg_func.
 */
export function pushDownWhere(a: Analysis, where: Expr | undefined, whereHasAgg: boolean, ctx: PushContext): PushedWhere {
  const sources = new Map<string, Expr>();
  const streams = a.sources.filter((s) => s.def.kind === "stream").map((s) => s.name);
  const joins = a.stmt.joins.filter((_, i) => !a.lookups.some((l) => l.index === i));
  const aligned = a.sources.some((s) => s.def.kind === "table" && !isLookupTable(s.def));
  const w = a.window;
  let windowFilter: Expr | undefined = w?.filter;

  /** Stream DataSources, in order: each takes the conjuncts reading only its columns (or none). */
  const intoSources = (cs: Expr[]): Expr[] => {
    let rest = cs;
    for (const name of streams) {
      const owned: Expr[] = [];
      const other: Expr[] = [];
      for (const c of rest) ([...refSources(c)].every((r) => r === name || r === "") ? owned : other).push(c);
      if (owned.length) sources.set(name, andAll(owned)!);
      rest = other;
    }
    return rest;
  };
  /** What the plan below the joins does with `cs`; returns what comes back up. */
  const below = (cs: Expr[]): Expr[] => {
    if (w && ctx.windowPasses) {
      // The window merges its FILTER in, passes all to its input and keeps what returns.
      const all = [...cs, ...conjuncts(windowFilter)];
      windowFilter = andAll(ctx.stopped ? all : intoSources(all));
      return [];
    }
    if (w || ctx.stopped) return cs;
    return intoSources(cs);
  };
  // The window is only reached through the join aligner's stream children: with a scan table it is
  // not one, so nothing passes it (a table's column must never filter stream rows).
  const belowJoin = (cs: Expr[]): Expr[] => (aligned && w ? cs : below(cs));

  const first = joins[0];
  let on = first?.on;
  let filter: Expr | undefined;
  if (whereHasAgg) {
    // A WHERE with aggregates stays whole after agg_func; the window's FILTER still goes down.
    filter = where;
    (joins.length ? belowJoin : below)([]);
  } else if (!joins.length) filter = andAll(below(conjuncts(where)));
  else if (joins.length === 1 && first!.type === "INNER") {
    // An INNER join absorbs WHERE into its ON, pushes the single-source conjuncts and keeps the rest.
    const all = [...conjuncts(where), ...conjuncts(on)];
    const rest = belowJoin(all.filter(pushable));
    on = andAll([...all.filter((c) => !pushable(c)), ...rest]);
  } else {
    const cs = conjuncts(where);
    const rest = belowJoin(cs.filter(pushable));
    filter = andAll([...cs.filter((c) => !pushable(c)), ...rest]);
  }
  return { sources, windowFilter, on, filter };
}
