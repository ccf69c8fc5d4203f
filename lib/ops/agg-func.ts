/**
 * Aggregates in WHERE (`<n>_agg_func`, sql §11.1): computed once over the whole collection (a
 * single row is a group of one) and cached on every row before the filter reads them.
 */
import type { Evaluator } from "../expr/compile.ts";
import { GroupRow, JoinedRow, Tuple, type EvalCtx, type Row } from "../expr/row.ts";
import { Collection, TRANSIENT, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";

export class AggFuncOp extends Operator {
  private readonly calls: { slot: number; eval: Evaluator }[];
  private readonly slots: number;
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, calls: { slot: number; eval: Evaluator }[], slots: number) {
    super(name, env, "");
    this.calls = calls;
    this.slots = slots;
  }

  protected process(item: Item): void {
    const rows: Row[] = item instanceof Tuple ? [item] : item instanceof Collection ? item.rows : [];
    if (rows.length === 0 && !(item instanceof Collection)) return;
    this.ctx.window = item instanceof Collection ? item.window : null;
    this.metrics.messagesProcessed += rows.length;
    const group = new GroupRow(rows, 0);
    for (const c of this.calls) {
      const v = c.eval(group, this.ctx);
      for (const r of rows) {
        const t = r instanceof Tuple ? r : r instanceof JoinedRow ? r.tuples[0]! : undefined;
        if (t) (t.cache ??= new Array(this.slots))[c.slot] = v;
      }
    }
    // The values are cached on tuples the next window may share.
    if (item instanceof Collection) item.ownership = TRANSIENT;
    this.emit(item);
  }
}
