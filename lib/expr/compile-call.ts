/**
 * Function calls (sql §7.11): scalar calls through the registry, aggregates over a group's rows,
 * analytic and window-function results read from the row cache, and the engine-supplied
 * functions (meta, mqtt, window ranges, set-returning, changed_cols).
 */
import { RowError } from "../errors.ts";
import { callFailure, invoke } from "../functions/invoke.ts";
import type { Accumulator, CallCtx, FuncDef } from "../functions/registry.ts";
import type { Call, Expr } from "../sql/ast.ts";
import { colFuncFieldName } from "../sql/render.ts";
import { compileExpr, type Evaluator, type Scope } from "./compile.ts";
import { AGG_HIT_FUNCS, HitState, ROW_HIT_FUNCS } from "./hits.ts";
import { GroupRow, type Row } from "./row.ts";
import { fmtV, isObj, strictEqual, type Obj, type Value } from "../value/values.ts";

export function compileCall(e: Call, scope: Scope): Evaluator {
  const slot = scope.cachedCalls.get(e);
  if (slot !== undefined) {
    return (row) => {
      const v = row.cached(slot);
      return v === undefined ? null : v;
    };
  }
  if (ROW_HIT_FUNCS.has(e.name) || AGG_HIT_FUNCS.has(e.name)) return compileHit(e.name, scope);
  const def = scope.functions.lookup(e.name);
  if (!def) throw new RowError(`function ${e.name} not found`);
  switch (def.kind) {
    case "special":
      return compileSpecial(e, scope);
    case "aggregate":
      return compileAggregate(e, def, scope);
    case "multi":
      return compileChangedCols(e, scope);
    case "srf":
      return compileScalar(e, e.name === "extract" ? EXTRACT : def, scope);
    default:
      return compileScalar(e, def, scope);
  }
}

/** The call site's context; shared by every compilation of the same AST node. */
export function callCtx(e: Expr, name: string, scope: Scope): CallCtx {
  let holder = scope.callState.get(e);
  if (!holder) {
    holder = { state: undefined };
    scope.callState.set(e, holder);
  }
  const h = holder;
  return {
    name,
    env: scope.env,
    get state() {
      return h.state;
    },
    set state(v: unknown) {
      h.state = v;
    },
  };
}

function compileScalar(e: Call, def: FuncDef, scope: Scope): Evaluator {
  const args = e.args.map((a) => compileExpr(a, scope));
  const n = args.length;
  const cc = callCtx(e, e.name, scope);
  const evalArgs = (row: Row, ctx: Parameters<Evaluator>[1]): Value[] => {
    const vals = new Array<Value>(n);
    for (let i = 0; i < n; i++) vals[i] = args[i]!(row, ctx);
    return vals;
  };
  if (scope.aggregate) {
    // [quirk] in aggregate context a failing scalar function yields null (sql §7.11).
    return (row, ctx) => {
      const vals = evalArgs(row, ctx);
      try {
        return invoke(def, vals, cc);
      } catch (err) {
        if (err instanceof RowError) return null;
        throw err;
      }
    };
  }
  return (row, ctx) => invoke(def, evalArgs(row, ctx), cc);
}

/** Rows of a group; a plain row is a group of one (aggregates without a window, sql §11.1). */
export function groupRows(row: Row): readonly Row[] {
  return row instanceof GroupRow ? row.rows : [row];
}

/**
 * A group aggregated row by row by an incremental window (windows §9): aggregate call `slot`
 * reads its accumulator, which yields exactly what the buffered `exec` over the group's rows would.
 */
export interface IncrementalGroup {
  /**
   * The accumulator of `slot`, to read its value at once (it may be one reader for every group);
   * throws (unprefixed) the first argument error recorded for it.
   */
  aggregate(slot: number): Pick<Accumulator, "value">;
}

function compileAggregate(e: Call, def: FuncDef, scope: Scope): Evaluator {
  const rowScope: Scope = { ...scope, aggregate: false };
  const args = e.args.map((a) => compileExpr(a, rowScope));
  const cc = callCtx(e, e.name, scope);
  // deduplicate also receives the group's row objects (eKuiper appends a hidden `*`).
  const withRows = e.name === "deduplicate";
  const slot = scope.aggSlots?.get(e);
  return (row, ctx) => {
    if (slot !== undefined) {
      const inc = (row as Partial<IncrementalGroup>).aggregate;
      if (inc !== undefined) {
        const acc = inc.call(row, slot);
        try {
          return acc.value();
        } catch (err) {
          throw callFailure(cc, err);
        }
      }
    }
    const rows = groupRows(row);
    const arrays: Value[] = new Array(args.length + (withRows ? 1 : 0));
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!;
      const col = new Array<Value>(rows.length);
      for (let j = 0; j < rows.length; j++) col[j] = arg(rows[j]!, ctx);
      arrays[i] = col;
    }
    if (withRows) arrays[args.length] = rows.map((r) => r.all(undefined));
    return invoke(def, arrays, cc);
  };
}

const EXTRACT: FuncDef = {
  name: "extract",
  kind: "srf",
  policy: "N",
  exec: ([v]) => {
    if (!isObj(v!)) throw new RowError("extract should use map");
    return [v!];
  },
};

function compileSpecial(e: Call, scope: Scope): Evaluator {
  switch (e.name) {
    case "meta":
      return compileExpr(e.args[0]!, scope);
    case "mqtt": {
      const get = compileExpr(e.args[0]!, scope);
      return (row, ctx) => {
        const v = get(row, ctx);
        if (v === null) return null;
        if (typeof v !== "string") throw new RowError("call func mqtt error: <nil>");
        return v;
      };
    }
    case "window_start":
      return (_row, ctx) => (ctx.window ? BigInt(ctx.window.start) : null);
    case "window_end":
      return (_row, ctx) => (ctx.window ? BigInt(ctx.window.end) : null);
    case "window_trigger":
      return (_row, ctx) => (ctx.window ? BigInt(ctx.window.trigger) : null);
    case "event_time":
      // Aggregate projections see the window trigger; per-row projections the row's own time.
      if (scope.aggregate) return (row, ctx) => BigInt(ctx.window ? ctx.window.trigger : row.ts);
      return (row) => BigInt(row.ts);
  }
  throw new RowError(`function ${e.name} is not supported`);
}

/**
 * `changed_cols(prefix, ignoreNull, cols...)` (functions §5.1): an object of the columns whose
 * value changed since the previous row, keyed `prefix + name`; null when none changed.
 */
function compileChangedCols(e: Call, scope: Scope): Evaluator {
  const [prefixArg, ignoreArg, ...cols] = e.args as [Expr, Expr, ...Expr[]];
  const prefix = compileExpr(prefixArg, scope);
  const ignore = compileExpr(ignoreArg, scope);
  const columns = cols.map((c) => ({
    name: colFuncFieldName(c),
    wildcard: c.kind === "wildcard" ? c : undefined,
    value: compileExpr(c, scope),
  }));
  const cc = callCtx(e, "changed_cols", scope);
  return (row, ctx) => {
    const p = prefix(row, ctx);
    const ig = ignore(row, ctx);
    if (typeof p !== "string") throw new RowError(`call func changed_cols error: first arg is not a string but got ${fmtV(p)}`);
    if (typeof ig !== "boolean") throw new RowError(`call func changed_cols error: second arg is not a bool but got ${fmtV(ig)}`);
    const last = (cc.state ??= new Map<string, Value>()) as Map<string, Value>;
    const out: Obj = {};
    let changed = false;
    const visit = (name: string, v: Value) => {
      if (ig && v === null) return;
      if (last.has(name) && strictEqual(last.get(name)!, v)) return;
      last.set(name, v);
      out[p + name] = v;
      changed = true;
    };
    for (const c of columns) {
      const v = c.value(row, ctx);
      if (c.wildcard) {
        const obj = v as Obj;
        for (const k of Object.keys(obj)) if (!c.wildcard.except.includes(k)) visit(k, obj[k]!);
      } else visit(c.name, v);
    }
    return changed ? out : null;
  };
}

/**
 * last_hit_count/time and last_agg_hit_count/time (functions §2). In clause mode every call reads
 * the shared state, which the WHERE/HAVING operator advances (SELECT still sees the values from
 * before the pass); otherwise the call site's own state advances on every evaluation.
 */
function compileHit(name: string, scope: Scope): Evaluator {
  const agg = AGG_HIT_FUNCS.has(name);
  const wantCount = name.endsWith("count");
  const shared = agg ? scope.hits.agg : scope.hits.row;
  if (shared) return () => BigInt(wantCount ? shared.readCount() : shared.readTime());
  const own = new HitState();
  return (row, ctx) => {
    const v = BigInt(wantCount ? own.count : own.time);
    own.advance(agg && ctx.window ? ctx.window.trigger : row.ts);
    return v;
  };
}
