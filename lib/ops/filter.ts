/** WHERE (`<n>_filter`) and window FILTER (`<n>_windowFilter`): keeps rows whose condition is true. */
import type { Evaluator } from "../expr/compile.ts";
import type { Expr } from "../sql/ast.ts";
import type { HitState } from "../expr/hits.ts";
import { Tuple, type EvalCtx, type Row } from "../expr/row.ts";
import { truthy } from "../expr/truthy.ts";
import { Collection, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";

export class FilterOp extends Operator {
  private readonly cond: Evaluator;
  /** last_hit_* state advanced by each passing row (functions §2), when WHERE holds one. */
  private readonly hits: HitState | undefined;
  private readonly ctx: EvalCtx = { window: null };
  /** The condition as written, when nothing but its truth decides a row (no last_hit_* state): what an index may answer. */
  readonly where: Expr | undefined;
  constructor(name: string, env: OpEnv, cond: Evaluator, hits?: HitState, where?: Expr) {
    super(name, env, "run Where error: ");
    this.cond = cond;
    this.hits = hits;
    this.where = hits === undefined ? where : undefined;
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
      if (!truthy(this.cond(item, ctx))) return;
      if (this.hits) this.hits.pass(1, item.ts, () => this.emit(item));
      else this.emit(item);
      return;
    }
    if (item instanceof Collection) {
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
        const groups = item.groups.filter((g) => truthy(this.cond(g, ctx)));
        this.metrics.messagesProcessed += item.groups.length;
        if (groups.length === 0) return;
        const out = item.derive([]);
        out.groups = groups;
        this.emit(out);
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
  }
}
