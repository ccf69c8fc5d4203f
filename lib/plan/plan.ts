/**
 * The planner: analysis → physical plan (sql §13). Builds the operator list in eKuiper's plan
 * order, names each node with eKuiper's index arithmetic, applies the predicate push-down that
 * changes node order, and compiles every expression once into closures.
 */
import { PlanError } from "../errors.ts";
import { compileExpr, type Evaluator, type Scope } from "../expr/compile.ts";
import type { Zone } from "../value/time.ts";
import type { FuncEnv, FunctionRegistry } from "../functions/registry.ts";
import type { Call, Expr, SelectStatement } from "../sql/ast.ts";
import type { BoundField } from "../sql/render.ts";
import { clauseExprs, some, walk } from "../sql/walk.ts";
import { AGG_HIT_FUNCS, HitState, ROW_HIT_FUNCS, type Hits } from "../expr/hits.ts";
import { analyze, type Analysis, type SourceRef } from "./analyze.ts";
import { pushDownWhere } from "./push-down.ts";
import { callCtx } from "../expr/compile-call.ts";
import type { AnalyticSite, JoinSpec, LookupSpec, OpSpec, ProjectSpec, RulePlan, SortKey, SourcePlan } from "./specs.ts";
import { isLookupTable, retainSize, type StreamDef } from "./streams.ts";
import { projectSpecOf } from "./project-spec.ts";
import { andAll, conjuncts, readsSource } from "./lookup.ts";
import { aggregateCalls, chooseEvaluator, ekuiperIncremental, groupColumns, type WindowEvaluator } from "./plan-window.ts";
import { ekuiperAccumulator } from "../functions/inc-ekuiper.ts";
import type { IncSpec } from "./window-spec.ts";

/** Rule options that shape the plan (rules-and-sinks.md §2, sql §18). */
export interface PlanOptions {
  readonly env: FuncEnv;
  /** The functions calls resolve to: the built-ins and the owner's UDFs. */
  readonly functions: FunctionRegistry;
  readonly zone: Zone;
  readonly sendMetaToSink?: boolean;
  readonly sendNil?: boolean;
  readonly isEventTime?: boolean;
  /** `basic.ignoreCase` (sql §6.3). */
  readonly ignoreCase?: boolean;
  /** Streams whose source yields bytes get a `<i>_decoder` node (rest-api.md §6.3); set by the runtime. */
  readonly decoder?: (def: StreamDef) => boolean;
  /** A push source's `interval` in ms, a `<i>_ratelimit` node (rules-and-sinks.md §8.1); set by the runtime. */
  readonly rateLimit?: (def: StreamDef) => number | undefined;
  /** Event time: `lateTolerance` in ms (default 1000, windows §6.2). */
  readonly lateTolerance?: number;
  /** `planOptimizeStrategy.enableIncrementalWindow`: eKuiper's `inc_agg_window` (windows §9). */
  readonly incrementalWindow?: boolean;
  /** floe's `windowEvaluator` option: "buffered" turns off incremental evaluation (plan-window.ts). */
  readonly windowEvaluator?: WindowEvaluator | "auto";
}

export interface PlannedRule {
  readonly plan: RulePlan;
  readonly analysis: Analysis;
}

export function planSelect(stmt: SelectStatement, streams: ReadonlyMap<string, StreamDef>, opts: PlanOptions): PlannedRule {
  const analysis = analyze(stmt, streams, { functions: opts.functions, sendMetaToSink: opts.sendMetaToSink });
  return { plan: new Planner(analysis, opts).build(), analysis };
}

class Planner {
  private idx = 0;
  private readonly cachedCalls = new Map<Expr, number>();
  private readonly scope: Scope;
  private readonly aggScope: Scope;
  private readonly hits: Hits;
  /** Aggregate call → accumulator slot, filled when the window is incremental (windows §9). */
  private readonly aggSlots = new Map<Expr, number>();
  /** The window's evaluator; `ekuiper`: eKuiper's fused `inc_agg_window` (windows §9). */
  private readonly evaluator: WindowEvaluator;
  private readonly ekuiperInc: boolean;
  /** WHERE minus the conjuncts that run after lookups (sql §13.2: a Lookup keeps those reading its table). */
  private readonly where: Expr | undefined;
  /** Per lookup join: the filter right after it (its ON's other conjuncts and WHERE's). */
  private readonly lookupFilters: (Expr | undefined)[];

  constructor(
    private readonly a: Analysis,
    private readonly opts: PlanOptions,
  ) {
    const callState = new Map<Expr, { state: unknown }>();
    const s = a.stmt;
    [this.where, this.lookupFilters] = splitLookupWhere(a);
    const holds = (e: Expr | undefined, names: Set<string>) => !!e && hasCall(e, names);
    this.hits = {
      row: holds(s.where, ROW_HIT_FUNCS) ? new HitState() : undefined,
      agg: holds(s.having, AGG_HIT_FUNCS) ? new HitState() : undefined,
    };
    this.scope = { env: opts.env, functions: opts.functions, aggregate: false, cachedCalls: this.cachedCalls, callState, hits: this.hits, ignoreCase: opts.ignoreCase, aggSlots: this.aggSlots };
    this.aggScope = { ...this.scope, aggregate: true };
    let slot = 0;
    for (const c of [...a.analytic, ...a.windowFuncs, ...a.whereAggregates]) this.cachedCalls.set(c, slot++);
    const calls = aggregateCalls(a);
    const eventTime = !!opts.isEventTime;
    this.ekuiperInc = !!opts.incrementalWindow && ekuiperIncremental(a, calls);
    const whereAfter = eventTime || a.window?.type === "count" || a.window?.type === "sliding";
    this.evaluator =
      this.ekuiperInc || (opts.windowEvaluator !== "buffered" && chooseEvaluator(a, calls, eventTime, whereAfter) === "incremental")
        ? "incremental"
        : "buffered";
    if (this.evaluator === "incremental") calls.forEach((c, i) => this.aggSlots.set(c, i));
  }

  private name(kind: string): string {
    return `${++this.idx}_${kind}`;
  }

  private compile(e: Expr, aggregate = false): Evaluator {
    return compileExpr(e, aggregate ? this.aggScope : this.scope);
  }

  build(): RulePlan {
    const a = this.a;
    const s = a.stmt;
    const w = a.window;
    const eventTime = !!this.opts.isEventTime;
    // eKuiper's inc_agg_window filters the aggregated rows: WHERE stays after it (windows §9).
    const windowPasses = !!w && (w.type === "tumbling" || w.type === "hopping" || w.type === "session") && !eventTime && !this.ekuiperInc;
    const whereHasAgg = a.whereAggregates.length > 0;
    const pushed = pushDownWhere(a, this.where, whereHasAgg, { windowPasses, stopped: a.analytic.length > 0 || eventTime });
    // Operators are numbered children first (sql §13.3): each stream with its helpers and pushed
    // filter, the nodes above the streams, then the scan tables the join aligner takes beside them.
    const sources = a.sources.filter((x) => x.def.kind === "stream").map((x) => this.planSource(x, pushed.sources.get(x.name)));
    const ops: OpSpec[] = [];
    // Event time: a watermark operator follows the sources and stops the push-down (sql §13.2).
    if (eventTime) ops.push(this.watermarkOp());
    if (a.analytic.length) ops.push(this.analyticOp());
    if (w) ops.push(...this.windowOps(pushed.windowFilter, pushed.windowFilter !== w.filter));
    const tables = a.sources.filter((x) => x.def.kind === "table" && !isLookupTable(x.def));
    for (const t of tables) sources.push(this.planSource(t, undefined));
    const joins = s.joins.filter((_, i) => !a.lookups.some((l) => l.index === i));
    if (joins.length) {
      if (tables.length)
        ops.push({ kind: "join_aligner", name: this.name("join_aligner"), tables: tables.map((t) => ({ name: t.name, retain: retainSize(t.def) })) });
      ops.push({ kind: "join", name: this.name("join"), joins: this.joinSpecs(joins, pushed.on) });
    }
    a.lookups.forEach((l, i) => {
      // The lookup node is named after its table; its index is consumed (sql §13.3).
      this.idx++;
      const spec: LookupSpec = {
        table: l.table,
        type: l.join.type === "LEFT" ? "LEFT" : "INNER",
        fields: l.keys.map((k) => k.field),
        values: l.keys.map((k) => this.compile(k.expr)),
      };
      ops.push({ kind: "lookup", name: l.table.name, spec });
      const f = this.lookupFilters[i];
      if (f) ops.push(this.filterOp(f));
    });
    if (whereHasAgg) {
      const calls = a.whereAggregates.map((c) => ({ slot: this.cachedCalls.get(c)!, eval: this.compileAggregate(c) }));
      ops.push({ kind: "agg_func", name: this.name("agg_func"), calls, slots: this.cachedCalls.size });
    }
    if (pushed.filter) ops.push(this.filterOp(pushed.filter));
    if (a.dimensions.length && w?.type !== "state" && !this.ekuiperInc)
      ops.push({ kind: "aggregate", name: this.name("aggregate"), dims: a.dimensions.map((d) => this.compile(d)) });
    if (s.having) ops.push({ kind: "having", name: this.name("having"), cond: this.compile(s.having, true), hits: this.hits.agg });
    for (const c of a.windowFuncs) ops.push(this.windowFuncOp(c));
    if (s.orderBy.length) ops.push({ kind: "order", name: this.name("order"), keys: this.sortKeys(s.orderBy, a.aggregate) });
    ops.push({ kind: "project", name: this.name("project"), spec: this.projectSpec() });
    const srf = s.fields.find((f) => f.expr.kind === "call" && this.opts.functions.kind(f.expr.name) === "srf");
    if (srf) ops.push({ kind: "projectset", name: this.name("projectset"), column: srf.name, single: !w && !s.joins.length });
    return { sources, ops, slots: this.cachedCalls.size };
  }

  /** A source node (it consumes an index), its helper operators and the filter pushed onto it. */
  private planSource(src: SourceRef, filter: Expr | undefined): SourcePlan & { helpers: OpSpec[] } {
    this.idx++;
    const helpers: OpSpec[] = [];
    const def = src.def;
    const interval = this.opts.rateLimit?.(def);
    if (interval !== undefined) {
      const name = this.name("ratelimit");
      helpers.push({ kind: "ratelimit", name: def.options.SHARED ? `${def.name}_ratelimit` : name, interval });
    }
    if (this.opts.decoder?.(def)) {
      // A shared stream's decoder belongs to the stream's sub-topology: `op_<stream>_decoder` (rest-api §6.3).
      const name = this.name("decoder");
      helpers.push({ kind: "decoder", name: def.options.SHARED ? `${def.name}_decoder` : name });
    }
    const columns = this.usedColumns(def, false);
    // eKuiper validates the columns the rule reads (names match declared fields case-insensitively, sql §6.3).
    const read = columns.read && new Set([...columns.read].map((c) => c.toLowerCase()));
    const strict = def.fields && def.options.STRICT_VALIDATION ? def.fields.filter((f) => !read || read.has(f.name.toLowerCase())) : null;
    const eventTime = this.opts.isEventTime && def.kind === "stream";
    if (eventTime && !def.options.TIMESTAMP)
      throw new PlanError("preprocessor is set to be event time but stream option TIMESTAMP not found");
    if (strict || eventTime) {
      helpers.push({
        kind: "preprocessor",
        name: this.name("preprocessor"),
        spec: {
          strict,
          timestampField: eventTime ? def.options.TIMESTAMP : undefined,
          timestampFormat: def.options.TIMESTAMP_FORMAT,
          zone: this.opts.zone,
        },
      });
    }
    if (filter) helpers.push(this.filterOp(filter));
    return { def, name: def.name, helpers, columns: columns.keep, valueColumns: this.usedColumns(def, true).keep };
  }

  /**
   * The columns of `def` any expression reads (`read`, with the event-time field) and those its
   * decoding keeps (`keep`: every declared one too); null when a wildcard (or deduplicate's hidden
   * `*`) needs them all. With `values`, the `*` of `count(*)` needs none (it counts rows).
   */
  private usedColumns(def: StreamDef, values: boolean): { read: ReadonlySet<string> | null; keep: ReadonlySet<string> | null } {
    const s = this.a.stmt;
    const cols = new Set<string>();
    let all = false;
    const exprs = [...s.fields.map((f) => f.expr), ...clauseExprs(s)];
    const counted = new Set<Expr>();
    if (values) {
      for (const e of exprs) {
        walk(e, (n) => {
          if (n.kind === "call" && n.name.toLowerCase() === "count") for (const x of n.args) if (x.kind === "wildcard") counted.add(x);
        });
      }
    }
    for (const e of exprs) {
      walk(e, (n) => {
        if (n.kind === "wildcard" && (n.stream === undefined || n.stream === def.name) && !counted.has(n)) all = true;
        else if (n.kind === "call" && n.name === "deduplicate") all = true;
        else if (n.kind === "field") {
          const b = (n as BoundField).bound;
          if (!(n as BoundField).aliasOf && (b === undefined || b === def.name)) cols.add(n.name);
        }
      });
    }
    if (all) return { read: null, keep: null };
    if (def.options.TIMESTAMP) cols.add(def.options.TIMESTAMP);
    const read = new Set(cols);
    for (const f of def.fields ?? []) cols.add(f.name);
    return { read, keep: cols };
  }

  private filterOp(where: Expr): OpSpec {
    return { kind: "filter", name: this.name("filter"), cond: this.compile(where), hits: this.hits.row, where };
  }

  private analyticOp(): OpSpec {
    const sites: AnalyticSite[] = this.a.analytic.map((c) => ({
      slot: this.cachedCalls.get(c)!,
      def: this.opts.functions.lookup(c.name)!,
      ctx: callCtx(c, c.name, this.scope),
      // The call's own slot must not be read while computing it: compile args without it.
      args: c.args.map((x) => this.compile(x)),
      partition: (c.over?.partition ?? []).map((p) => this.compile(p)),
      when: c.over?.when ? this.compile(c.over.when) : undefined,
      states: new Map(),
    }));
    return { kind: "analytic", name: this.name("analytic"), sites, slots: this.cachedCalls.size };
  }

  private watermarkOp(): OpSpec {
    const streams = this.a.sources.filter((x) => x.def.kind === "stream").map((x) => x.name);
    return { kind: "watermark", name: this.name("watermark"), streams, lateTolerance: this.opts.lateTolerance ?? 1000, markers: !!this.a.window };
  }

  /** The window, after its pre-filter `filter` (`whereHits`: it holds conjuncts of WHERE). */
  private windowOps(filter: Expr | undefined, whereHits: boolean): OpSpec[] {
    const w = this.a.window!;
    const eventTime = !!this.opts.isEventTime;
    if (eventTime && w.type === "count" && !this.ekuiperInc) throw new PlanError("unsupported window type 5");
    const n = ++this.idx;
    const out: OpSpec[] = [];
    if (filter) out.push({ kind: "windowFilter", name: `${n}_windowFilter`, cond: this.compile(filter), hits: whereHits ? this.hits.row : undefined });
    // last_hit_* in a window condition read the state its trigger advances (functions §2).
    const conds = [w.trigger, w.begin, w.emit].filter((e): e is Expr => !!e);
    const hits = conds.some((e) => hasCall(e, ROW_HIT_FUNCS)) ? new HitState() : undefined;
    const condScope: Scope = hits ? { ...this.scope, hits: { row: hits } } : this.scope;
    const cond = (e: Expr | undefined) => (e ? compileExpr(e, condScope) : undefined);
    out.push({
      kind: "window",
      name: `${n}_${this.ekuiperInc ? "inc_agg_window" : "window"}`,
      window: w,
      trigger: cond(w.trigger),
      begin: cond(w.begin),
      emit: cond(w.emit),
      partition: w.partition.map((p) => this.compile(p)),
      eventTime,
      hits,
      inc: this.evaluator === "incremental" ? this.incSpec() : undefined,
    });
    return out;
  }

  /** What an incremental window evaluates per row (windows §9; plan-window.ts). */
  private incSpec(): IncSpec {
    const a = this.a;
    const ekuiper = this.ekuiperInc;
    const rowScope: Scope = { ...this.scope, aggregate: false };
    const aggs = [...this.aggSlots.keys()].map((e) => {
      const c = e as Call;
      const def = this.opts.functions.lookup(c.name)!;
      return {
        def,
        args: c.args.map((x) => compileExpr(x, rowScope)),
        ctx: callCtx(c, c.name, this.aggScope),
        accumulator: ekuiper ? ekuiperAccumulator(c.name) : def.accumulator!,
        column: ekuiper ? undefined : def.column,
      };
    });
    // WHERE runs inside the window when it would run on the window's rows (count windows, event
    // time); eKuiper's inc_agg_window filters the aggregated rows instead.
    const w = a.window!;
    const whereInside = !ekuiper && !!this.where && (!!this.opts.isEventTime || w.type === "count");
    return {
      aggs,
      dims: a.dimensions.map((d) => this.compile(d)),
      where: whereInside ? this.compile(this.where!) : undefined,
      ekuiper,
      keep: groupColumns(a, ekuiper, !!this.opts.ignoreCase),
    };
  }

  /**
   * Left/right sides (sql §12.2): the first join's sides come from the streams its ON names. `on`
   * is the first join's condition after the push-down.
   */
  private joinSpecs(joins: SelectStatement["joins"], on: Expr | undefined): JoinSpec[] {
    const s = this.a.stmt;
    return joins.map((j, i) => {
      const cond = i === 0 ? on : j.on;
      if (i === 0 && j.type !== "CROSS" && j.on && cond) {
        const named: string[] = [];
        walk(j.on, (n) => {
          const b = n.kind === "field" ? (n as BoundField).bound : undefined;
          if (b && !named.includes(b)) named.push(b);
        });
        if (named.length === 2) return { type: j.type, left: named[0]!, right: named[1]!, on: this.compile(cond) };
      }
      return { type: j.type, left: i > 0 ? "" : s.from.name, right: j.source.name, on: cond ? this.compile(cond) : undefined };
    });
  }

  private compileAggregate(c: Call): Evaluator {
    // An aggregate in WHERE is computed over the whole collection, outside the cache.
    const saved = this.cachedCalls.get(c)!;
    this.cachedCalls.delete(c);
    const ev = this.compile(c, true);
    this.cachedCalls.set(c, saved);
    return ev;
  }

  private windowFuncOp(c: Call): OpSpec {
    return {
      kind: "windowFunc",
      name: this.name("windowFunc"),
      site: {
        slot: this.cachedCalls.get(c)!,
        partition: (c.over?.partition ?? []).map((p) => this.compile(p, this.a.aggregate)),
        orderBy: this.sortKeys(c.over?.orderBy ?? [], this.a.aggregate),
      },
      slots: this.cachedCalls.size,
    };
  }

  private sortKeys(list: SelectStatement["orderBy"], aggregate: boolean): SortKey[] {
    return list.map((o) => ({ eval: this.compile(o.expr, aggregate), ascending: o.ascending }));
  }

  private projectSpec(): ProjectSpec {
    return projectSpecOf(this.a.stmt, (e, agg) => this.compile(e, agg), this.a.aggregate, this.opts);
  }
}

/**
 * Predicate push-down through lookups (sql §13.2), from the last lookup down: each keeps the
 * conjuncts (of WHERE and of its ON's non-key part) reading its table as a filter above itself and
 * passes the others down; what reaches below the lookups is the WHERE the rest of the plan sees.
 * A WHERE with aggregates stays whole after agg_func.
 */
function splitLookupWhere(a: Analysis): [Expr | undefined, (Expr | undefined)[]] {
  const where = a.stmt.where;
  if (!a.lookups.length) return [where, []];
  const whereHasAgg = a.whereAggregates.length > 0;
  let pending = whereHasAgg ? [] : conjuncts(where);
  const filters: (Expr | undefined)[] = [];
  for (let i = a.lookups.length - 1; i >= 0; i--) {
    const l = a.lookups[i]!;
    const all = [...pending, ...l.rest];
    filters[i] = andAll(all.filter((c) => readsSource(c, l.table.name)));
    pending = all.filter((c) => !readsSource(c, l.table.name));
  }
  if (!whereHasAgg) return [andAll(pending), filters];
  // Reading no lookup table, these give the same rows after the first lookup as before it.
  filters[0] = andAll([...pending, ...conjuncts(filters[0])]);
  return [where, filters];
}

/** True if `e` calls one of `names`, directly or through an alias. */
function hasCall(e: Expr, names: Set<string>): boolean {
  return some(e, (n) => (n.kind === "call" && names.has(n.name)) || (n.kind === "field" && !!(n as BoundField).aliasOf && hasCall((n as BoundField).aliasOf!, names)));
}
