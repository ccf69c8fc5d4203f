/**
 * row_number() (`<n>_windowFunc`, functions §5.3): numbers the rows of a collection, optionally
 * per partition (emitted in sorted key order) and after sorting by its own ORDER BY.
 */
import type { RowNumberSite } from "../plan/specs.ts";
import { GroupRow, JoinedRow, Tuple, type EvalCtx, type Row } from "../expr/row.ts";
import { fmtV, type Value } from "../value/values.ts";
import { Collection, TRANSIENT, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";
import { sortRows } from "./order.ts";

function setCached(r: Row, slot: number, v: Value, slots: number): void {
  const t = r instanceof Tuple ? r : r instanceof JoinedRow ? r.tuples[0]! : r instanceof GroupRow ? (r.rows[0] as Tuple | undefined) : undefined;
  if (!t) return;
  (t.cache ??= new Array(slots))[slot] = v;
}

export class WindowFuncOp extends Operator {
  private readonly site: RowNumberSite;
  private readonly slots: number;
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, site: RowNumberSite, slots: number) {
    super(name, env, "");
    this.site = site;
    this.slots = slots;
  }

  protected process(item: Item): void {
    const { slot, partition, orderBy } = this.site;
    if (item instanceof Tuple) {
      this.metrics.messagesProcessed++;
      setCached(item, slot, 1n, this.slots);
      this.emit(item);
      return;
    }
    if (!(item instanceof Collection)) return;
    this.ctx.window = item.window;
    this.metrics.messagesProcessed += item.rows.length;
    let rows: Row[] = item.groups ?? item.rows;
    if (partition.length > 0) {
      const parts = new Map<string, Row[]>();
      for (const r of rows) {
        let key = "";
        for (const p of partition) key += fmtV(p(r, this.ctx)) + ",";
        const list = parts.get(key);
        if (list) list.push(r);
        else parts.set(key, [r]);
      }
      rows = [];
      for (const key of [...parts.keys()].sort()) {
        const part = orderBy.length ? sortRows(parts.get(key)!, orderBy, this.ctx) : parts.get(key)!;
        part.forEach((r, i) => setCached(r, slot, BigInt(i + 1), this.slots));
        rows.push(...part);
      }
    } else {
      if (orderBy.length) rows = sortRows(rows, orderBy, this.ctx);
      rows.forEach((r, i) => setCached(r, slot, BigInt(i + 1), this.slots));
    }
    const out = item.derive(item.groups ? item.rows : rows);
    out.ownership = TRANSIENT; // the numbers are cached on tuples the next window may share
    if (item.groups) out.groups = rows as GroupRow[];
    this.emit(out);
  }
}
