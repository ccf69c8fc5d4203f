/**
 * HOPPINGWINDOW(unit, L, H) in processing time (windows §4.2, §3.4): every H, the rows of the
 * last L; window_start is the previous tick minus H [quirk].
 */
import type { Tuple } from "../../expr/row.ts";
import type { IncSpec, WindowSpec } from "../../plan/window-spec.ts";
import { alignedEnd } from "./align.ts";
import type { HopHolder } from "./holder.ts";
import { RowBuffer } from "./rows.ts";
import { TableHops } from "./tables.ts";
import { Ticker } from "./ticker.ts";
import { unitMs } from "./tumbling.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

export class HoppingWindowOp extends WindowOp {
  private readonly holder: HopHolder;
  private previous: number;
  private readonly ticker: Ticker;
  private readonly length: number;
  private readonly hop: number;

  constructor(name: string, env: WindowEnv, spec: WindowSpec, inc: IncSpec | undefined) {
    super(name, env, false, inc === undefined);
    this.length = spec.length;
    this.hop = spec.interval;
    this.previous = this.clock.now();
    const k = spec.interval / unitMs(spec);
    this.holder = inc ? new TableHops(inc, alignedEnd(this.previous, k, spec.unit!, this.zone) - spec.length, spec.interval, spec.length) : new RowBuffer(this.rowCap);
    this.ticker = new Ticker(this.clock, this.zone, k, spec.unit!, spec.interval, (t) => this.scan(t));
    this.ticker.start();
  }

  protected onRow(t: Tuple): void {
    this.holder.add(t);
  }

  private scan(end: number): void {
    const delta = end - this.previous - this.hop;
    const left = end - this.length - (delta > 0 ? delta : 0);
    let start = this.previous - this.hop;
    if (start <= 0) start = end - this.length;
    this.previous = end;
    const c = this.holder.takeHop(left, end, { start, end, trigger: end });
    if (c) this.emit(c);
  }

  flushTime(): number | undefined {
    if (!this.holder.held()) return undefined;
    const last = this.holder.lastTs();
    let t = this.ticker.nextTick;
    while (t <= last) t += this.hop;
    return t;
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
