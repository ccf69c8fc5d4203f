/** TUMBLINGWINDOW(unit, L) in processing time (windows §4.1): each tick emits every row older than it. */
import type { Tuple } from "../expr/row.ts";
import type { WindowSpec } from "../plan/window-spec.ts";
import { Ticker } from "./ticker.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

export class TumblingWindowOp extends WindowOp {
  private buffer: Tuple[] = [];
  private previous: number;
  private readonly ticker: Ticker;
  private readonly length: number;

  constructor(name: string, env: WindowEnv, spec: WindowSpec) {
    super(name, env);
    this.length = spec.length;
    this.previous = this.clock.now();
    this.ticker = new Ticker(this.clock, this.zone, spec.length / unitMs(spec), spec.unit!, spec.length, (t) => this.scan(t));
    this.ticker.start();
  }

  protected onRow(t: Tuple): void {
    this.buffer.push(t);
  }

  private scan(end: number): void {
    const inside: Tuple[] = [];
    const rest: Tuple[] = [];
    for (const t of this.buffer) (t.ts < end ? inside : rest).push(t);
    this.buffer = rest;
    const start = this.previous > 0 ? this.previous : end - this.length;
    this.previous = end;
    this.emitWindow(inside, { start, end, trigger: end });
  }

  flushTime(): number | undefined {
    return this.buffer.length ? this.ticker.nextTick : undefined;
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

export function unitMs(spec: WindowSpec): number {
  return { MS: 1, SS: 1000, MI: 60_000, HH: 3_600_000, DD: 86_400_000 }[spec.unit!];
}
