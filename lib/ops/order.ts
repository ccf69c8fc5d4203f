/**
 * ORDER BY (`<n>_order`, sql §11.4): a stable sort of a collection's rows or groups. Nulls sort
 * last in both directions; a sort key mixing type classes is an error.
 */
import { RowError } from "../errors.ts";
import type { SortKey } from "../plan/specs.ts";
import { DateTime } from "../value/time.ts";
import { goType, type Value } from "../value/values.ts";
import { compare } from "../expr/ops.ts";
import type { EvalCtx, Row } from "../expr/row.ts";
import { Collection, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";


function typeClass(v: Value): string {
  if (typeof v === "number" || typeof v === "bigint") return "number";
  if (typeof v === "boolean" || typeof v === "string") return typeof v;
  if (v instanceof DateTime) return "datetime";
  return "other";
}

/** Sorts rows by keys (sql §11.4); shared by ORDER BY and row_number() OVER (ORDER BY). */
export function sortRows<R extends Row>(rows: R[], keys: readonly SortKey[], ctx: EvalCtx): R[] {
  const values = rows.map((r) => keys.map((k) => k.eval(r, ctx)));
  /** Per key: every value is null or of one JS type that `<` orders as `compare` does (number, bigint, string). */
  const plain = keys.map(() => true);
  for (let k = 0; k < keys.length; k++) {
    let first: Value = null;
    for (const vs of values) {
      const v = vs[k]!;
      if (v === null) continue;
      if (first === null) {
        first = v;
        plain[k] = typeof v === "number" || typeof v === "bigint" || typeof v === "string";
        continue;
      }
      const fc = typeClass(first);
      if (fc === "other" || typeClass(v) !== fc)
        throw new RowError(`incompatible types for comparison: ${goType(first)} and ${goType(v)}`);
      if (typeof v !== typeof first) plain[k] = false;
    }
  }
  const idx = rows.map((_, i) => i);
  idx.sort((a, b) => {
    for (let k = 0; k < keys.length; k++) {
      const x = values[a]![k]!;
      const y = values[b]![k]!;
      if (x === null || y === null) {
        if (x === y) continue;
        return x === null ? 1 : -1;
      }
      if (typeof x === "boolean") continue;
      const asc = keys[k]!.ascending;
      if (plain[k]) {
        // One type on both sides: what `compare` does, without its dispatch (bench/order-sort.ts: half the time).
        if ((x as number) < (y as number)) return asc ? -1 : 1;
        if ((y as number) < (x as number)) return asc ? 1 : -1;
        continue;
      }
      if (compare("<", x, y)) return asc ? -1 : 1;
      if (compare("<", y, x)) return asc ? 1 : -1;
    }
    return a - b;
  });
  return idx.map((i) => rows[i]!);
}

export class OrderOp extends Operator {
  private readonly keys: SortKey[];
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, keys: SortKey[]) {
    super(name, env, "run Order By error: ");
    this.keys = keys;
  }

  protected process(item: Item): void {
    if (!(item instanceof Collection)) {
      this.metrics.messagesProcessed++;
      this.emit(item);
      return;
    }
    this.ctx.window = item.window;
    this.metrics.messagesProcessed += item.rows.length;
    const out = item.derive(item.rows);
    if (item.groups) out.groups = sortRows(item.groups, this.keys, this.ctx);
    else out.rows = sortRows(item.rows, this.keys, this.ctx);
    this.emit(out);
  }
}
