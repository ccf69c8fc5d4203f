/**
 * HOPPINGWINDOW(unit, L, H) in processing time (windows §4.2, §3.4): every H, the rows of the
 * last L; window_start is the previous tick minus H [quirk].
 */
import type { Tuple } from "../expr/row.ts";
import type { WindowSpec } from "../plan/window-spec.ts";
import { Ticker } from "./ticker.ts";
import { unitMs } from "./tumbling.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

export class HoppingWindowOp extends WindowOp {
  private buffer: Tuple[] = [];
  private previous: number;
  private readonly ticker: Ticker;
  private readonly length: number;
  private readonly hop: number;

  constructor(name: string, env: WindowEnv, spec: WindowSpec) {
    super(name, env);
    this.length = spec.length;
    this.hop = spec.interval;
    this.previous = this.clock.now();
    this.ticker = new Ticker(this.clock, this.zone, spec.interval / unitMs(spec), spec.unit!, spec.interval, (t) => this.scan(t));
    this.ticker.start();
  }

  protected onRow(t: Tuple): void {
    this.buffer.push(t);
  }

  private scan(end: number): void {
    const delta = end - this.previous - this.hop;
    const left = end - this.length - (delta > 0 ? delta : 0);
    let i = 0;
    while (i < this.buffer.length && this.buffer[i]!.ts < left) i++;
    const kept = this.buffer.slice(i);
    const inside = kept.filter((t) => t.ts < end);
    // [quirk] with no row inside, the whole buffer is cleared, later rows included.
    this.buffer = inside.length ? kept.slice(kept.indexOf(inside[0]!)) : [];
    let start = this.previous - this.hop;
    if (start <= 0) start = end - this.length;
    this.previous = end;
    this.emitWindow(inside, { start, end, trigger: end });
  }

  flushTime(): number | undefined {
    if (!this.buffer.length) return undefined;
    const last = this.buffer[this.buffer.length - 1]!.ts;
    let t = this.ticker.nextTick;
    while (t <= last) t += this.hop;
    return t;
  }

  override snapshot(): unknown {
    return { rows: this.buffer, previous: this.previous, tick: this.ticker.snapshot() };
  }

  override restore(s: unknown): void {
    const st = s as { rows: Tuple[]; previous: number; tick: unknown };
    this.buffer = st.rows;
    this.previous = st.previous;
    this.ticker.restore(st.tick);
  }
}
