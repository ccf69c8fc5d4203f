/**
 * Set-returning expansion (`<n>_projectset`, sql §15): the SRF column's array becomes one row per
 * element. A single-row input yields one emission per element; a collection stays one emission.
 */
import { RowError } from "../errors.ts";
import { isObj, type Obj } from "../value/values.ts";
import { Emission, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";

export class ProjectSetOp extends Operator {
  private readonly column: string;
  /** The input was a single row (not a collection): each produced row is its own emission. */
  private readonly single: boolean;
  constructor(name: string, env: OpEnv, column: string, single: boolean) {
    // eKuiper's projectset raises its errors bare: they are not the select's (`run Select error:`).
    super(name, env, "");
    this.column = column;
    this.single = single;
  }

  protected process(item: Item): void {
    if (!(item instanceof Emission)) return;
    const col = this.column;
    const out: Obj[] = [];
    for (const row of item.rows) {
      if (!(col in row)) throw new RowError(`can't find the result from the ${col} function`);
      const arr = row[col];
      if (!Array.isArray(arr)) throw new RowError(`the argument for the ${col} function should be array`);
      for (const el of arr) {
        const r: Obj = {};
        for (const k in row) if (k !== col) r[k] = row[k]!;
        if (isObj(el)) Object.assign(r, el);
        else r[col] = el;
        out.push(r);
      }
    }
    this.metrics.messagesProcessed += item.rows.length;
    if (this.single) for (const r of out) this.emit(new Emission([r], item.meta));
    else this.emit(new Emission(out, item.meta));
  }
}
