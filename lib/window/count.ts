/** COUNTWINDOW(n[, m]) (windows §4.5): every m rows, the last n rows if at least n are held. */
import type { Tuple } from "../expr/row.ts";
import type { WindowSpec } from "../plan/window-spec.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

export class CountWindowOp extends WindowOp {
  private buffer: Tuple[] = [];
  private count = 0;
  private readonly n: number;
  private readonly m: number;

  constructor(name: string, env: WindowEnv, spec: WindowSpec) {
    super(name, env);
    this.n = spec.length;
    this.m = spec.interval;
  }

  protected onRow(t: Tuple): void {
    this.buffer.push(t);
    this.count++;
    if (this.count % this.m !== 0) return;
    this.count = 0;
    if (this.buffer.length < this.n) return;
    const rows = this.buffer.slice(this.buffer.length - this.n);
    this.buffer = rows.slice(1);
    const now = this.clock.now();
    this.emitWindow(rows, { start: now, end: now, trigger: now });
  }

  flushTime(): undefined {
    return undefined;
  }

  override snapshot(): unknown {
    return { rows: this.buffer, count: this.count };
  }

  override restore(s: unknown): void {
    const st = s as { rows: Tuple[]; count: number };
    this.buffer = st.rows;
    this.count = st.count;
  }
}
