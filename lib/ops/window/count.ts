/** COUNTWINDOW(n[, m]) (windows §4.5): every m rows, the last n rows if at least n are held. */
import type { Tuple } from "../../expr/row.ts";
import type { IncSpec, WindowSpec } from "../../plan/window-spec.ts";
import type { CountHolder } from "./holder.ts";
import { RowBuffer } from "./rows.ts";
import { CountTables } from "./tables.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

export class CountWindowOp extends WindowOp {
  private readonly holder: CountHolder;
  /** Rows taken so far (checkpoints before the holders were split kept it modulo m: the same firings). */
  private count = 0;
  private readonly n: number;
  private readonly m: number;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec | undefined, eventTime: boolean) {
    super(name, env, eventTime, inc === undefined);
    this.n = spec.length;
    this.m = spec.interval;
    // eKuiper's inc_agg_window: window_start is the first row's time (windows §9).
    this.holder = inc ? new CountTables(inc, this.n, this.m, inc.ekuiper) : new RowBuffer(this.rowCap);
  }

  protected onRow(t: Tuple): void {
    const i = ++this.count;
    this.holder.add(t, i);
    if (i % this.m !== 0) return;
    const c = this.holder.takeCount(i, this.n, this.clock.now());
    if (c) this.emit(c);
  }

  flushTime(): undefined {
    return undefined;
  }

  override snapshot(): unknown {
    return { ...this.holder.save(), count: this.count };
  }

  override restore(s: unknown): void {
    const st = s as { count: number };
    this.holder.load(st);
    this.count = st.count;
  }
}
