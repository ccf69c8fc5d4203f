/** WHERE (`<n>_filter`) and window FILTER (`<n>_windowFilter`): keeps rows whose condition is true. */
import { RowError } from "../../errors.ts";
import type { Evaluator } from "../../expr/compile.ts";
import { Tuple, type EvalCtx, type Row } from "../../expr/row.ts";
import { typeValue } from "../../expr/values.ts";
import { Collection, type Item } from "../item.ts";
import { Operator, type OpEnv } from "../operator.ts";

/** WHERE truthiness (sql §9.4): true keeps, false/null drop, anything else is an error. */
export function truthy(v: unknown): boolean {
  if (v === true) return true;
  if (v === false || v === null) return false;
  throw new RowError(`invalid condition that returns non-bool value ${typeValue(v as never)}`);
}

export class FilterOp extends Operator {
  private readonly cond: Evaluator;
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, cond: Evaluator) {
    super(name, env, "run Where error: ");
    this.cond = cond;
  }

  protected process(item: Item): void {
    const ctx = this.ctx;
    if (item instanceof Tuple) {
      ctx.window = null;
      this.metrics.messagesProcessed++;
      if (truthy(this.cond(item, ctx))) this.emit(item);
      return;
    }
    if (item instanceof Collection) {
      ctx.window = item.window;
      const kept: Row[] = [];
      for (const r of item.rows) if (truthy(this.cond(r, ctx))) kept.push(r);
      this.metrics.messagesProcessed += item.rows.length;
      // A window whose rows all fail WHERE emits nothing (windows §2.3).
      if (kept.length > 0) this.emit(new Collection(kept, item.window));
    }
  }
}
