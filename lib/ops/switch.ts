/**
 * A graph `switch` node (graph-rules.md §6.11): each item goes, unchanged, to the port of every
 * case that holds (only the first with `stopAtFirstMatch`). Its records_out_total stays 0, as
 * eKuiper's does.
 */
import { RowError } from "../errors.ts";
import type { Evaluator } from "../expr/compile.ts";
import { GroupRow, Tuple, type EvalCtx, type Row } from "../expr/row.ts";
import { Collection, type Consumer, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";

const NOWHERE: Consumer = { push() {} };

export class SwitchOp extends Operator {
  /** Output port i receives the items for which case i holds. */
  ports: Consumer[];
  private readonly cases: Evaluator[];
  private readonly stopAtFirst: boolean;
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, cases: Evaluator[], stopAtFirst: boolean) {
    super(name, env, "");
    this.cases = cases;
    this.stopAtFirst = stopAtFirst;
    this.ports = cases.map(() => NOWHERE);
  }

  protected process(item: Item): void {
    let row: Row;
    if (item instanceof Tuple) {
      this.ctx.window = null;
      row = item;
    } else if (item instanceof Collection) {
      this.ctx.window = item.window;
      // Collections are tested in aggregate context: plain columns read the first row.
      row = item.groups?.[0] ?? new GroupRow(item.rows, item.window ? item.window.trigger : 0);
    } else return;
    this.metrics.messagesProcessed++;
    for (let i = 0; i < this.cases.length; i++) {
      let v;
      try {
        v = this.cases[i]!(row, this.ctx);
      } catch (e) {
        this.fail(e instanceof RowError ? e : new RowError(String(e)));
        continue;
      }
      if (v === null || v === false) continue;
      if (v !== true) {
        // eKuiper prints the node name where the value belongs.
        this.fail(new RowError(`run switch node ${this.metrics.name}, case ${i} error: invalid condition that returns non-bool value string(${this.metrics.name})`), true);
        continue;
      }
      this.ports[i]!.push(item);
      if (this.stopAtFirst) break;
    }
  }
}
