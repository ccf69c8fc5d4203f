/** HAVING (`<n>_having`, sql §11.3): keeps the groups (or the whole window) whose condition is true. */
import { RowError } from "../../errors.ts";
import type { Evaluator } from "../../expr/compile.ts";
import { GroupRow, Tuple, type EvalCtx } from "../../expr/row.ts";
import { typeValue } from "../../expr/values.ts";
import { Collection, type Item } from "../item.ts";
import { Operator, type OpEnv } from "../operator.ts";

function passes(v: unknown): boolean {
  if (typeof v === "boolean") return v;
  throw new RowError(`invalid condition that returns non-bool value ${typeValue(v as never)}`);
}

export class HavingOp extends Operator {
  private readonly cond: Evaluator;
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, cond: Evaluator) {
    super(name, env, "run Having error: ");
    this.cond = cond;
  }

  protected process(item: Item): void {
    const ctx = this.ctx;
    if (item instanceof Tuple) {
      ctx.window = null;
      this.metrics.messagesProcessed++;
      if (passes(this.cond(item, ctx))) this.emit(item);
      return;
    }
    if (!(item instanceof Collection)) return;
    ctx.window = item.window;
    this.metrics.messagesProcessed += item.rows.length;
    const groups = item.groups ?? [new GroupRow(item.rows, item.window ? item.window.trigger : 0)];
    const kept = groups.filter((g) => passes(this.cond(g, ctx)));
    if (kept.length === 0) return;
    const out = new Collection(item.rows, item.window);
    out.groups = kept;
    this.emit(out);
  }
}
