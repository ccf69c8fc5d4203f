/** TUMBLINGWINDOW(unit, L) in processing time (windows §4.1): each tick emits every row older than it. */
import type { Tuple } from "../../expr/row.ts";
import type { IncSpec, WindowSpec } from "../../plan/window-spec.ts";
import type { PaneHolder } from "./holder.ts";
import { RowBuffer } from "./rows.ts";
import { TablePane } from "./tables.ts";
import { Ticker } from "./ticker.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

export class TumblingWindowOp extends WindowOp {
  private readonly holder: PaneHolder;
  private previous: number;
  private readonly ticker: Ticker;
  private readonly length: number;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec | undefined) {
    super(name, env, false, inc === undefined);
    this.holder = inc ? new TablePane(inc) : new RowBuffer(this.rowCap);
    this.length = spec.length;
    this.previous = this.clock.now();
    this.ticker = new Ticker(this.clock, this.zone, spec.length / unitMs(spec), spec.unit!, spec.length, (t) => this.scan(t));
    this.ticker.start();
  }

  protected onRow(t: Tuple): void {
    this.holder.add(t);
  }

  private scan(end: number): void {
    const start = this.previous > 0 ? this.previous : end - this.length;
    this.previous = end;
    const c = this.holder.takeBefore(end, { start, end, trigger: end });
    if (c) this.emit(c);
  }

  flushTime(): number | undefined {
    return this.holder.held() ? this.ticker.nextTick : undefined;
  }

  override close(): void {
    this.ticker.stop();
  }

  override snapshot(): unknown {
    return { ...this.holder.save(), previous: this.previous, tick: this.ticker.snapshot() };
  }

  override restore(s: unknown): void {
    const st = s as { previous: number; tick: unknown };
    this.holder.load(st);
    this.previous = st.previous;
    this.ticker.restore(st.tick);
  }
}

export function unitMs(spec: WindowSpec): number {
  return { MS: 1, SS: 1000, MI: 60_000, HH: 3_600_000, DD: 86_400_000 }[spec.unit!];
}
