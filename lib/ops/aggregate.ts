/**
 * GROUP BY (`<n>_aggregate`, sql §11.2): splits a collection into groups keyed by the `%v` of
 * each dimension plus a comma; groups keep first-appearance order. An empty input emits nothing.
 */
import type { Evaluator } from "../expr/compile.ts";
import { GroupRow, type EvalCtx, type Row } from "../expr/row.ts";
import { fmtV } from "../value/values.ts";
import { Collection, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";

export class AggregateOp extends Operator {
  private readonly dims: Evaluator[];
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, dims: Evaluator[]) {
    super(name, env, "run Group By error: ");
    this.dims = dims;
  }

  protected process(item: Item): void {
    if (!(item instanceof Collection)) return;
    const inc = item.inc;
    if (inc !== null) {
      // An incremental window grouped the rows as they arrived.
      if (inc.groupError !== null) throw inc.groupError;
      if (inc.passed > 0) this.emit(item);
      return;
    }
    const rows = item.rows;
    this.metrics.messagesProcessed += rows.length;
    if (rows.length === 0) return;
    const groups = new Map<string, Row[]>();
    const dims = this.dims;
    const ctx = this.ctx;
    ctx.window = item.window;
    // A big window is grouped across event-loop turns.
    this.spreadRows(
      item.ownership,
      rows.length,
      (i) => {
        const r = rows[i]!;
        let key = "";
        for (const d of dims) key += fmtV(d(r, ctx)) + ",";
        const g = groups.get(key);
        if (g) g.push(r);
        else groups.set(key, [r]);
      },
      () => {
        const out = item.derive(rows);
        const ts = item.window ? item.window.trigger : 0;
        out.groups = [...groups.values()].map((g) => new GroupRow(g, ts));
        this.emit(out);
      },
    );
  }
}
