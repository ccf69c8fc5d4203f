/**
 * The one filter operator: WHERE (`<n>_filter`), window FILTER (`<n>_windowFilter`) and HAVING
 * (`<n>_having`, sql §11.3) keep the rows, groups or whole windows whose condition passes. They
 * differ in their truth rule (WHERE drops null, HAVING takes booleans only: sql §9.4), their
 * eKuiper error prefix, and what they make of a collection: WHERE filters a window's rows (or the
 * groups an incremental window hands on), HAVING its groups (or the window as one group). Groups
 * are filtered across event-loop turns under the turn budget (Operator.spreadRows).
 */
import type { Evaluator } from "../expr/compile.ts";
import type { Expr } from "../sql/ast.ts";
import type { HitState } from "../expr/hits.ts";
import { GroupRow, Tuple, type EvalCtx, type Row } from "../expr/row.ts";
import { nonBool, truthy } from "../expr/truthy.ts";
import type { Value } from "../value/values.ts";
import { Collection, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";

/** HAVING accepts only booleans: null is an error too (sql §9.4). */
function isTrue(v: Value): boolean {
  if (typeof v === "boolean") return v;
  throw nonBool(v);
}

export class FilterOp extends Operator {
  private readonly cond: Evaluator;
  /**
   * WHERE: last_hit_* state advanced by each passing row; HAVING: last_agg_hit_* state advanced
   * once per emission with a passing group (functions §2). Undefined when the clause holds none.
   */
  private readonly hits: HitState | undefined;
  /** HAVING's truth rule and collections, else WHERE's. */
  private readonly having: boolean;
  private readonly ctx: EvalCtx = { window: null };
  /** The condition as written, when nothing but its truth decides a row (a WHERE without last_hit_* state): what an index may answer. */
  readonly where: Expr | undefined;

  private constructor(name: string, env: OpEnv, having: boolean, cond: Evaluator, hits: HitState | undefined, where: Expr | undefined) {
    super(name, env, having ? "run Having error: " : "run Where error: ");
    this.cond = cond;
    this.hits = hits;
    this.having = having;
    this.where = hits === undefined ? where : undefined;
  }

  /** WHERE or a window FILTER; `where`: the condition's AST, for a shared stream's predicate index. */
  static where(name: string, env: OpEnv, cond: Evaluator, hits?: HitState, where?: Expr): FilterOp {
    return new FilterOp(name, env, false, cond, hits, where);
  }

  /** HAVING. */
  static having(name: string, env: OpEnv, cond: Evaluator, hits?: HitState): FilterOp {
    return new FilterOp(name, env, true, cond, hits, undefined);
  }

  /** A row whose condition an index found false: counted as `process` counts one it rejects. */
  rejected(now: number): void {
    const m = this.metrics;
    m.recordsIn++;
    m.messagesProcessed++;
    m.lastInvocation = now;
  }

  protected process(item: Item): void {
    const ctx = this.ctx;
    if (item instanceof Tuple) {
      ctx.window = null;
      this.metrics.messagesProcessed++;
      const v = this.cond(item, ctx);
      if (!(this.having ? isTrue(v) : truthy(v))) return;
      if (this.hits) this.hits.pass(1, item.ts, () => this.emit(item));
      else this.emit(item);
      return;
    }
    if (!(item instanceof Collection)) return;
    if (this.having) {
      this.metrics.messagesProcessed += item.rows.length;
      const trigger = item.window ? item.window.trigger : 0;
      ctx.window = item.window;
      this.keepGroups(item, item.groups ?? [new GroupRow(item.rows, trigger)], item.rows, 0, this.hits, trigger);
      return;
    }
    const inc = item.inc;
    if (inc !== null) {
      // WHERE already ran row by row inside an incremental window.
      if (inc.whereError !== null) throw inc.whereError;
      if (inc.passed > 0) this.emit(item);
      return;
    }
    ctx.window = item.window;
    if (item.groups !== null) {
      // eKuiper's inc_agg_window: WHERE filters the aggregated rows (windows §9).
      this.keepGroups(item, item.groups, [], item.groups.length, undefined, 0);
      return;
    }
    const kept: Row[] = [];
    for (const r of item.rows) if (truthy(this.cond(r, ctx))) kept.push(r);
    this.metrics.messagesProcessed += item.rows.length;
    // A window whose rows all fail WHERE emits nothing (windows §2.3).
    if (kept.length === 0) return;
    const out = new Collection(kept, item.window);
    if (this.hits) this.hits.pass(kept.length, kept[kept.length - 1]!.ts, () => this.emit(out));
    else this.emit(out);
  }

  /**
   * Keeps the groups whose condition passes, across turns for many groups; then counts `counted`
   * rows processed and, unless none passed, emits them over `rows` (advancing `hits` at `trigger`).
   */
  private keepGroups(item: Collection, groups: readonly GroupRow[], rows: Row[], counted: number, hits: HitState | undefined, trigger: number): void {
    const kept: GroupRow[] = [];
    const cond = this.cond;
    const ctx = this.ctx;
    const having = this.having;
    this.spreadRows(
      item.ownership,
      groups.length,
      (i) => {
        const g = groups[i]!;
        const v = cond(g, ctx);
        if (having ? isTrue(v) : truthy(v)) kept.push(g);
      },
      () => {
        this.metrics.messagesProcessed += counted;
        if (kept.length === 0) return;
        const out = item.derive(rows);
        out.groups = kept;
        if (hits) hits.pass(1, trigger, () => this.emit(out));
        else this.emit(out);
      },
    );
  }
}
