/**
 * A graph `function` / `aggfunc` node (graph-rules.md §6.2–6.3): sets one computed column and
 * keeps every other. Per row on rows and non-grouped collections; in aggregate mode once per group
 * (the whole collection when not grouped), the result stored on the group, which is then emitted
 * as its first row merged with its aggregate results.
 */
import type { Evaluator } from "../expr/compile.ts";
import { GroupRow, JoinedRow, Tuple, type EvalCtx, type Row } from "../expr/row.ts";
import type { Obj, Value } from "../value/values.ts";
import { Collection, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";

/** A group carrying aggregate results (`aggfunc`): they read before the group's first row. */
export class AggGroupRow extends GroupRow {
  readonly extras: Obj;
  constructor(rows: Row[], ts: number, extras: Obj) {
    super(rows, ts);
    this.extras = extras;
  }
  override value(name: string, stream: string | undefined): Value {
    const v = this.extras[name];
    return v !== undefined && stream === undefined ? v : super.value(name, stream);
  }
  override valueFold(name: string, stream: string | undefined): Value {
    const v = this.extras[name];
    return v !== undefined && stream === undefined ? v : super.valueFold(name, stream);
  }
  override all(stream: string | undefined): Obj {
    return stream === undefined ? { ...super.all(stream), ...this.extras } : super.all(stream);
  }
  override columns(stream: string | undefined): Obj {
    return stream === undefined ? { ...super.columns(stream), ...this.extras } : super.columns(stream);
  }
}

export class ColumnOp extends Operator {
  private readonly field: string;
  private readonly eval: Evaluator;
  private readonly aggregate: boolean;
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, field: string, ev: Evaluator, aggregate: boolean) {
    super(name, env, "run Function error: ");
    this.field = field;
    this.eval = ev;
    this.aggregate = aggregate;
  }

  protected process(item: Item): void {
    const ctx = this.ctx;
    if (item instanceof Tuple) {
      ctx.window = null;
      this.metrics.messagesProcessed++;
      if (this.aggregate) {
        const g = new AggGroupRow([item], item.ts, { [this.field]: this.eval(new GroupRow([item], item.ts), ctx) });
        const out = new Collection([item], null);
        out.groups = [g];
        this.emit(out);
        return;
      }
      this.emit(this.withColumn(item, this.eval(item, ctx)));
      return;
    }
    if (!(item instanceof Collection)) return;
    ctx.window = item.window;
    this.metrics.messagesProcessed += item.rows.length;
    if (this.aggregate) {
      const trigger = item.window ? item.window.trigger : 0;
      const groups = item.groups ?? [new GroupRow(item.rows, trigger)];
      const out = item.derive(item.rows);
      out.groups = groups.map((g) => {
        const extras = g instanceof AggGroupRow ? { ...g.extras } : {};
        extras[this.field] = this.eval(g, ctx);
        return new AggGroupRow(g.rows, g.ts, extras);
      });
      this.emit(out);
      return;
    }
    const rows: Row[] = new Array(item.rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = item.rows[i]!;
      rows[i] = this.withColumn(r, this.eval(r, ctx));
    }
    this.emit(item.derive(rows));
  }

  /** A copy of `r` with the column set: fanned-out items are shared, so none is mutated. */
  private withColumn(r: Row, v: Value): Row {
    if (r instanceof Tuple) {
      const t = new Tuple({ ...r.data, [this.field]: v }, r.meta, r.ts, r.emitter);
      t.cache = r.cache;
      return t;
    }
    if (r instanceof JoinedRow) {
      const first = r.tuples[0]!;
      return new JoinedRow([new Tuple({ [this.field]: v }, first.meta, first.ts, first.emitter), ...r.tuples]);
    }
    return r;
  }
}
