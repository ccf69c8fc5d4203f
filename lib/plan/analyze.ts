/**
 * The analyzer (sql §6.2): checks that sources exist, binds every column reference to a stream
 * or a select alias, and runs the plan-time checks with eKuiper's messages, in eKuiper's order.
 * Binding annotates the AST in place (`BoundField.bound` / `aliasOf`).
 */
import { PlanError } from "../errors.ts";
import { AGG_HIT_FUNCS } from "../expr/hits.ts";
import type { FunctionRegistry } from "../functions/registry.ts";
import type { Call, Expr, Field, SelectStatement } from "../sql/ast.ts";
import { renderExpr, type BoundField } from "../sql/render.ts";
import { children, clauseExprs, some, walk } from "../sql/walk.ts";
import { analyzeLookups, type LookupJoin } from "./lookup.ts";
import { findField, type StreamDef } from "./streams.ts";
import { extractWindow, isWindowCall, type WindowSpec } from "./window-spec.ts";

export interface SourceRef {
  readonly name: string;
  readonly alias?: string;
  readonly def: StreamDef;
}

export interface Analysis {
  readonly stmt: SelectStatement;
  readonly sources: SourceRef[];
  readonly window?: WindowSpec;
  /** GROUP BY expressions other than the window. */
  readonly dimensions: Expr[];
  /** Aggregate query (sql §11.1): aggregates in the select list or GROUP BY dimensions. */
  readonly aggregate: boolean;
  /** Analytic call sites in evaluation order (sql §14). */
  readonly analytic: Call[];
  /** row_number() call sites. */
  readonly windowFuncs: Call[];
  /** Aggregate calls in WHERE (computed by the agg_func operator). */
  readonly whereAggregates: Call[];
  /** Joins with lookup tables (sql §12.5), in written order. */
  readonly lookups: LookupJoin[];
  /** The functions the statement's calls resolve to. */
  readonly functions: FunctionRegistry;
}

const ANALYTIC = new Set(["lag", "latest", "changed_col", "had_changed", "acc_sum", "acc_min", "acc_max", "acc_avg", "acc_count"]);

/** Aggregate functions, including last_agg_hit_* (functions §2: kind A). */
export const isAggregateCall =
  (functions: FunctionRegistry) =>
  (e: Expr): e is Call =>
    e.kind === "call" && (functions.kind(e.name) === "aggregate" || AGG_HIT_FUNCS.has(e.name));
export const isAnalyticCall = (e: Expr): e is Call => e.kind === "call" && ANALYTIC.has(e.name);

/** True if `e` contains an aggregate call, looking through alias references. */
export function hasAggregate(e: Expr, functions: FunctionRegistry): boolean {
  const isAgg = isAggregateCall(functions);
  const has = (x: Expr): boolean => some(x, (n) => isAgg(n) || (n.kind === "field" && !!(n as BoundField).aliasOf && has((n as BoundField).aliasOf!)));
  return has(e);
}

export function analyze(stmt: SelectStatement, streams: ReadonlyMap<string, StreamDef>, opts: { readonly functions: FunctionRegistry; readonly sendMetaToSink?: boolean }): Analysis {
  const { functions } = opts;
  const sources: SourceRef[] = [];
  for (const src of [stmt.from, ...stmt.joins.map((j) => j.source)]) {
    const def = streams.get(src.name);
    if (!def) throw new PlanError(`fail to get stream ${src.name}, please check if stream is created`);
    sources.push({ name: src.name, alias: src.alias, def });
  }
  const aliases = new Map<string, { field: Field; index: number }>();
  stmt.fields.forEach((f, index) => {
    if (f.alias !== undefined) aliases.set(f.alias, { field: f, index });
    if (f.expr.kind === "wildcard") for (const r of f.expr.replace) if (r.alias !== undefined) aliases.set(r.alias, { field: r, index });
  });
  checkAliasCycles(aliases);

  const binder = new Binder(sources, aliases, functions);
  stmt.fields.forEach((f, i) => {
    // REPLACE items first: inside its own definition an alias name is the column.
    if (f.expr.kind === "wildcard") for (const r of f.expr.replace) binder.bind(r.expr, i, r.alias);
    binder.bind(f.expr, i, f.alias);
  });
  for (const e of clauseExprs(stmt)) binder.bind(e, Infinity, undefined);

  const lookups = analyzeLookups(stmt, streams);
  const { window, dimensions } = extractWindow(stmt.groupBy);
  checkAggregates(stmt, dimensions, window, functions);
  checkFields(stmt, functions);
  const aggregate = stmt.fields.some((f) => hasAggregate(f.expr, functions)) || dimensions.length > 0;

  const streamCount = sources.filter((s) => s.def.kind === "stream").length;
  if (stmt.joins.length > 0 && streamCount > 1 && !window)
    throw new PlanError("a time window or count window is required to join multiple streams");
  if (window && streamCount === 0) throw new PlanError("cannot run window for TABLE sources");
  if (opts.sendMetaToSink && (window || stmt.joins.length > 0))
    throw new PlanError("Invalid option sendMetaToSink, it can not be applied to window");

  return {
    stmt,
    sources,
    window,
    dimensions,
    aggregate,
    analytic: collectCalls(stmt, isAnalyticCall),
    windowFuncs: collectCalls(stmt, (e): e is Call => e.kind === "call" && functions.kind(e.name) === "window"),
    whereAggregates: stmt.where ? collect(stmt.where, isAggregateCall(functions)) : [],
    lookups,
    functions,
  };
}

function checkAliasCycles(aliases: Map<string, { field: Field }>): void {
  const state = new Map<string, number>(); // 1 visiting, 2 done
  const deps = (name: string): string[] => {
    const out: string[] = [];
    walk(aliases.get(name)!.field.expr, (n) => {
      if (n.kind === "field" && n.stream === undefined && n.name !== name && aliases.has(n.name)) out.push(n.name);
    });
    return out;
  };
  const visit = (name: string) => {
    if (state.get(name) === 2) return;
    if (state.get(name) === 1) throw new PlanError("select fields have cycled alias");
    state.set(name, 1);
    for (const d of deps(name)) visit(d);
    state.set(name, 2);
  };
  for (const name of aliases.keys()) visit(name);
}

class Binder {
  private readonly typed: boolean;
  private readonly isAgg: (e: Expr) => e is Call;
  constructor(
    private readonly sources: SourceRef[],
    private readonly aliases: Map<string, { field: Field; index: number }>,
    private readonly functions: FunctionRegistry,
  ) {
    this.typed = sources.every((s) => s.def.fields !== null);
    this.isAgg = isAggregateCall(functions);
  }

  /** Binds refs in `e`; `at` is the select-field index (Infinity outside the select list). */
  bind(e: Expr, at: number, ownAlias: string | undefined, inAggregate = false): void {
    const inner = inAggregate || this.isAgg(e);
    for (const c of children(e)) this.bind(c, at, ownAlias, inner);
    if (e.kind === "field") this.bindField(e as BoundField, at, ownAlias, inAggregate);
    else if (e.kind === "meta" && e.stream !== undefined) e.stream = this.streamOf(e.stream, at);
    else if (e.kind === "wildcard" && e.stream !== undefined) e.stream = this.streamOf(e.stream, at);
  }

  /**
   * Inside an aggregate's arguments an alias does not capture a column it shadows: a declared
   * column of that name, or any name whose alias is itself an aggregate (it could not be an
   * argument). `SELECT avg(a) AS a, sum(a) AS s` sums column `a`, as eKuiper does.
   */
  private shadowed(name: string, aliasExpr: Expr): boolean {
    return hasAggregate(aliasExpr, this.functions) || this.sources.some((s) => s.def.fields !== null && findField(s.def, name) !== undefined);
  }

  /**
   * Resolves a qualifier: a source name or a source alias. eKuiper accepts aliases only in the
   * select list (elsewhere `stream <alias> not found`); floe resolves them in every clause, a
   * documented deviation (README, "Differences from eKuiper").
   */
  private streamOf(q: string, _at: number): string {
    for (const s of this.sources) if (s.name === q || s.alias === q) return s.name;
    throw new PlanError(`stream ${q} not found`);
  }

  private bindField(f: BoundField, at: number, ownAlias: string | undefined, inAggregate: boolean): void {
    if (f.bound !== undefined || f.aliasOf) return; // already bound (shared alias subtree)
    if (f.stream !== undefined) {
      const stream = this.streamOf(f.stream, at);
      const src = this.sources.find((s) => s.name === stream)!;
      if (src.def.fields && !findField(src.def, f.name)) throw new PlanError(`unknown field ${f.stream}.${f.name}`);
      f.bound = stream;
      return;
    }
    const alias = this.aliases.get(f.name);
    if (alias && f.name !== ownAlias && (at === Infinity || this.typed || alias.index < at) && !(inAggregate && this.shadowed(f.name, alias.field.expr))) {
      f.aliasOf = alias.field.expr;
      return;
    }
    const having = this.sources.filter((s) => s.def.fields && findField(s.def, f.name));
    if (having.length > 1) throw new PlanError(`ambiguous field ${f.name}`);
    if (having.length === 1) {
      f.bound = having[0]!.name;
      return;
    }
    const schemaless = this.sources.filter((s) => !s.def.fields);
    if (schemaless.length === 0) throw new PlanError(`unknown field ${f.name}`);
    if (this.sources.length === 1) f.bound = this.sources[0]!.name;
  }
}

function checkAggregates(stmt: SelectStatement, dimensions: Expr[], window: WindowSpec | undefined, functions: FunctionRegistry): void {
  const isAgg = isAggregateCall(functions);
  const hasAgg = (e: Expr) => hasAggregate(e, functions);
  const all = [...stmt.fields.map((f) => f.expr), ...clauseExprs(stmt)];
  for (const e of all) {
    walk(e, (n) => {
      if (isAgg(n) && n.args.some(hasAgg))
        throw new PlanError(`invalid argument for func ${n.name}: aggregate argument is not allowed`);
    });
  }
  for (const d of dimensions) {
    if (hasAgg(d)) throw new PlanError(`Not allowed to call aggregate functions in GROUP BY clause: ${renderExpr(d)}.`);
  }
  if (stmt.having) checkHaving(stmt.having, hasAgg);
  if (dimensions.length > 0 && !window) throw new PlanError("select stmt group by should be used with window");
  const aggregateQuery = dimensions.length > 0 || !!window || stmt.joins.length > 0;
  if (aggregateQuery) {
    for (const e of all) {
      // A window's own conditions may use them: its trigger advances them (functions §2).
      if (isWindowCall(e)) continue;
      walk(e, (n) => {
        if (n.kind === "call" && (n.name === "last_hit_count" || n.name === "last_hit_time"))
          throw new PlanError(`function ${n.name} is not allowed in an aggregate query`);
      });
    }
  }
}

/** HAVING must be "all aggregate" at its leaves (sql §11.1); parentheses escape the check [quirk]. */
function checkHaving(h: Expr, hasAgg: (e: Expr) => boolean): void {
  const leaves = (e: Expr): Expr[] => {
    if (e.kind === "binary") return [...leaves(e.left), ...leaves(e.right)];
    if (e.kind === "between") return [...leaves(e.left), ...leaves(e.low), ...leaves(e.high)];
    if (e.kind === "in") return [...leaves(e.left), ...(e.list ?? [e.set!]).flatMap(leaves)];
    if (e.kind === "like") return [...leaves(e.left), ...leaves(e.pattern)];
    return [e];
  };
  for (const leaf of leaves(h)) {
    if ((leaf.kind === "call" || leaf.kind === "field") && !hasAgg(leaf))
      throw new PlanError(`Not allowed to call non-aggregate functions in HAVING clause: ${renderExpr(h)}.`);
  }
}

function checkFields(stmt: SelectStatement, functions: FunctionRegistry): void {
  const seen = new Set<string>();
  for (const f of stmt.fields) {
    if (f.expr.kind === "wildcard" || f.invisible) continue;
    if (seen.has(f.name)) throw new PlanError(`duplicate field definition ${f.name}`);
    seen.add(f.name);
  }
  const every = [...stmt.fields.map((f) => f.expr), ...clauseExprs(stmt)];
  for (const e of every) {
    walk(e, (n) => {
      if (n.kind === "slice" && n.start?.kind === "integer" && n.end?.kind === "integer" && n.start.value >= 0n && n.end.value >= 0n && n.start.value >= n.end.value)
        throw new PlanError("colon start value can't be greater than end value");
    });
  }
  const srf = stmt.fields.filter((f) => f.expr.kind === "call" && functions.kind(f.expr.name) === "srf").length;
  if (srf > 1) throw new PlanError("set-returning func shouldn't be more than 1");
}

function collect(e: Expr, pred: (e: Expr) => e is Call): Call[] {
  const out: Call[] = [];
  walk(e, (n) => {
    if (pred(n) && !out.includes(n)) out.push(n);
    if (n.kind === "field" && (n as BoundField).aliasOf) for (const c of collect((n as BoundField).aliasOf!, pred)) if (!out.includes(c)) out.push(c);
  });
  return out;
}

/** Call sites in select fields first (innermost first), then the other clauses. */
function collectCalls(stmt: SelectStatement, pred: (e: Expr) => e is Call): Call[] {
  const out: Call[] = [];
  for (const e of [...stmt.fields.map((f) => f.expr), ...clauseExprs(stmt)]) for (const c of collect(e, pred)) if (!out.includes(c)) out.push(c);
  return out;
}

