/**
 * Joins (sql §12): `<n>_join` joins the rows of a collection stream by stream in written order;
 * `<n>_join_aligner` pairs each stream row or window with the retained rows of scan tables.
 */
import { RowError } from "../errors.ts";
import { JoinedRow, Tuple, type EvalCtx, type Row } from "../expr/row.ts";
import { typeValue, type Obj } from "../value/values.ts";
import type { JoinSpec } from "../plan/specs.ts";
import { Collection, type Consumer, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";

function tuplesOf(r: Row): Tuple[] {
  return r instanceof JoinedRow ? r.tuples : [r as Tuple];
}

function combine(l: Row, r: Row): JoinedRow {
  return new JoinedRow([...tuplesOf(l), ...tuplesOf(r)]);
}

export class JoinOp extends Operator {
  private readonly joins: JoinSpec[];
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, joins: JoinSpec[]) {
    super(name, env, "run Join error: ");
    this.joins = joins;
  }

  private matches(spec: JoinSpec, row: JoinedRow): boolean {
    if (!spec.on) return true;
    const v = spec.on(row, this.ctx);
    if (typeof v !== "boolean") throw new RowError(`invalid join condition that returns non-bool value ${typeValue(v)}`);
    return v;
  }

  protected process(item: Item): void {
    if (!(item instanceof Collection)) return;
    this.ctx.window = item.window;
    this.metrics.messagesProcessed += item.rows.length;
    const tuples = item.rows as Tuple[];
    let left: Row[] = [];
    this.joins.forEach((spec, i) => {
      if (i === 0) left = tuples.filter((t) => t instanceof Tuple && t.emitter === spec.left);
      const right = tuples.filter((t) => t instanceof Tuple && t.emitter === spec.right);
      left = this.joinOne(spec, left, right);
    });
    if (left.length > 0) this.emit(new Collection(left, item.window));
  }

  private joinOne(spec: JoinSpec, ls: Row[], rs: Row[]): Row[] {
    const out: Row[] = [];
    switch (spec.type) {
      case "CROSS":
        for (const l of ls) for (const r of rs) out.push(combine(l, r));
        return out;
      case "INNER":
      case "LEFT":
      case "FULL": {
        const rightHit = new Set<Row>();
        for (const l of ls) {
          let hit = false;
          for (const r of rs) {
            const j = combine(l, r);
            if (this.matches(spec, j)) {
              out.push(j);
              hit = true;
              rightHit.add(r);
            }
          }
          if (!hit && spec.type !== "INNER") out.push(l instanceof JoinedRow ? l : new JoinedRow([l as Tuple]));
        }
        if (spec.type === "FULL") for (const r of rs) if (!rightHit.has(r)) out.push(new JoinedRow(tuplesOf(r)));
        return out;
      }
      case "RIGHT":
        for (const r of rs) {
          let hit = false;
          for (const l of ls) {
            const j = combine(r, l);
            if (this.matches(spec, j)) {
              out.push(j);
              hit = true;
            }
          }
          if (!hit) out.push(new JoinedRow(tuplesOf(r)));
        }
        return out;
    }
  }
}

/** A scan table's retained rows, as `GET /rules/{id}/scantables` shows them (rest-api.md §5). */
export interface ScanTableContent {
  readonly emitter: string;
  readonly content: Obj[];
}

/** Keeps the last RETAIN_SIZE rows per scan table; each stream row or window gets them appended. */
export class JoinAlignerOp extends Operator {
  private readonly tables = new Map<string, { readonly retain: number; rows: Tuple[] }>();
  constructor(name: string, env: OpEnv, tables: { name: string; retain: number }[]) {
    super(name, env, "");
    for (const t of tables) this.tables.set(t.name, { retain: t.retain, rows: [] });
  }

  /** The rows each scan table holds now, in table order (`GET /rules/{id}/scantables`). */
  scanTables(): ScanTableContent[] {
    const out: ScanTableContent[] = [];
    for (const [emitter, t] of this.tables) out.push({ emitter, content: t.rows.map((r) => r.data) });
    return out;
  }

  /** eKuiper's `$$batchInputs`: the retained rows of each table. */
  override snapshot(): unknown {
    const batch: Record<string, Tuple[]> = {};
    for (const [name, t] of this.tables) batch[name] = t.rows;
    return { $$batchInputs: batch };
  }

  override restore(s: unknown): void {
    const batch = (s as { $$batchInputs: Record<string, Tuple[]> }).$$batchInputs;
    for (const [name, t] of this.tables) t.rows = batch[name] ?? [];
  }

  /** The input a table source feeds: rows are retained, never emitted, and counted in (as eKuiper counts them). */
  tableInput(name: string): Consumer {
    return {
      push: (item: Item) => {
        const t = this.tables.get(name);
        if (!t || !(item instanceof Tuple)) return;
        this.metrics.recordsIn++;
        t.rows.push(item);
        if (t.rows.length > t.retain) t.rows.splice(0, t.rows.length - t.retain);
      },
    };
  }

  protected process(item: Item): void {
    let rows: Row[];
    let window = null;
    if (item instanceof Tuple) rows = [item];
    else if (item instanceof Collection) ((rows = item.rows), (window = item.window));
    else return;
    this.metrics.messagesProcessed += rows.length;
    const all = [...rows];
    for (const t of this.tables.values()) all.push(...t.rows);
    this.emit(new Collection(all, window));
  }
}
