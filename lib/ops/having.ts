/** HAVING (`<n>_having`, sql §11.3): keeps the groups (or the whole window) whose condition is true. */
import type { Evaluator } from "../expr/compile.ts";
import type { HitState } from "../expr/hits.ts";
import { GroupRow, Tuple, type EvalCtx } from "../expr/row.ts";
import type { Value } from "../value/values.ts";
import { Collection, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";
import { nonBool } from "../expr/truthy.ts";

/** HAVING accepts only booleans: null is an error too (sql §9.4). */
function passes(v: Value): boolean {
  if (typeof v === "boolean") return v;
  throw nonBool(v);
}

export class HavingOp extends Operator {
  private readonly cond: Evaluator;
  /** last_agg_hit_* state advanced once per emission with a passing group (functions §2). */
  private readonly hits: HitState | undefined;
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, cond: Evaluator, hits?: HitState) {
    super(name, env, "run Having error: ");
    this.cond = cond;
    this.hits = hits;
  }

  protected process(item: Item): void {
    const ctx = this.ctx;
    if (item instanceof Tuple) {
      ctx.window = null;
      this.metrics.messagesProcessed++;
      if (!passes(this.cond(item, ctx))) return;
      if (this.hits) this.hits.pass(1, item.ts, () => this.emit(item));
      else this.emit(item);
      return;
    }
    if (!(item instanceof Collection)) return;
    this.metrics.messagesProcessed += item.rows.length;
    const trigger = item.window ? item.window.trigger : 0;
    const groups = item.groups ?? [new GroupRow(item.rows, trigger)];
    const kept: GroupRow[] = [];
    const cond = this.cond;
    ctx.window = item.window;
    // A window of many groups is filtered across event-loop turns.
    this.spreadRows(
      item.lease,
      groups.length,
      (i) => {
        if (passes(cond(groups[i]!, ctx))) kept.push(groups[i]!);
      },
      () => {
        if (kept.length === 0) return;
        const out = item.derive(item.rows);
        out.groups = kept;
        if (this.hits) this.hits.pass(1, trigger, () => this.emit(out));
        else this.emit(out);
      },
    );
  }
}
