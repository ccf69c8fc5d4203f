/**
 * The watermark operator (`<n>_watermark`, windows §6.2): in event time it holds rows until the
 * watermark — the minimum over the rule's streams of the largest timestamp seen, minus
 * `lateTolerance` — passes them, releases them in timestamp order, then (when the rule has a
 * window) sends the watermark itself. Rows older than the last watermark are dropped and counted.
 * The rows it holds have a cap of their own, as large as the rule's window cap (ops/window/held-rows.ts):
 * a row over it is dropped and counted. Not the windows' own cap: a full window would make this node
 * drop the rows whose conditions must still reach it (a state window's end).
 */
import { Tuple } from "../expr/row.ts";
import { Watermark, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";
import { ByteBudget } from "../core/byte-budget.ts";
import { HeldRows } from "./window/held-rows.ts";
import type { WindowEnv } from "./window/window-op.ts";

export class WatermarkOp extends Operator {
  /** Largest timestamp seen per stream, by the stream's index in `streams`. */
  private readonly maxTs: number[];
  private readonly streams: Map<string, number>;
  private readonly tolerance: number;
  private readonly markers: boolean;
  private lastWM = -Infinity;
  /** Held rows sorted by ts (ties in arrival order); `head` is the first unreleased index. */
  private held: Tuple[] = [];
  private head = 0;
  /** Late rows dropped (the pipe runner's lost count). */
  dropped = 0;
  /** The held rows against a cap the size of the rule's window cap (none without one). */
  private readonly rowCap: HeldRows | null;

  constructor(name: string, env: OpEnv, streams: readonly string[], lateTolerance: number, markers: boolean) {
    super(name, env, "");
    this.streams = new Map(streams.map((s, i) => [s, i]));
    // Go's zero time + lateTolerance: effectively minus infinity.
    this.maxTs = streams.map(() => -Infinity);
    this.tolerance = lateTolerance;
    this.markers = markers;
    const budget = (env as Partial<WindowEnv>).windowBudget;
    this.rowCap = budget ? new HeldRows(new ByteBudget(budget.maxBytes, budget.maxRows), this.metrics, "the rows waiting for the watermark") : null;
  }

  protected process(item: Item): void {
    if (!(item instanceof Tuple)) return;
    this.metrics.messagesProcessed++;
    const i = this.streams.get(item.emitter);
    if (i === undefined) {
      this.emit(item); // not a watermarked stream (tables never get here)
      return;
    }
    const ts = item.ts;
    if (ts > this.maxTs[i]!) this.maxTs[i] = ts;
    if (ts < this.lastWM) {
      this.dropped++; // [quirk] silently: counted in, not out, no exception
      return;
    }
    if (this.rowCap !== null && !this.rowCap.admit(item)) return;
    this.insert(item);
    let min = Infinity;
    for (const m of this.maxTs) if (m < min) min = m;
    const wm = min - this.tolerance;
    if (wm > this.lastWM) this.release(wm);
  }

  /** eKuiper's state keys (`$$wartermark` sic): the last watermark, held rows, per-stream maxima. */
  override snapshot(): unknown {
    const streamwms: Record<string, number> = {};
    for (const [s, i] of this.streams) streamwms[s] = this.maxTs[i]!;
    return { $$wartermark: this.lastWM, $$eventinputs: this.held.slice(this.head), $$streamwms: streamwms };
  }

  override restore(s: unknown): void {
    const st = s as { $$wartermark: number; $$eventinputs: Tuple[]; $$streamwms: Record<string, number> };
    this.lastWM = st.$$wartermark;
    this.held = st.$$eventinputs;
    this.head = 0;
    this.rowCap?.restored(this.held);
    for (const [name, i] of this.streams) {
      const m = st.$$streamwms[name];
      if (m !== undefined) this.maxTs[i] = m;
    }
  }

  private insert(t: Tuple): void {
    const h = this.held;
    let hi = h.length;
    if (hi === this.head || h[hi - 1]!.ts <= t.ts) {
      h.push(t);
      return;
    }
    let lo = this.head;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (h[mid]!.ts <= t.ts) lo = mid + 1;
      else hi = mid;
    }
    h.splice(lo, 0, t);
  }

  private release(wm: number): void {
    const h = this.held;
    let i = this.head;
    while (i < h.length && h[i]!.ts <= wm) {
      const t = h[i]!;
      h[i++] = undefined as unknown as Tuple; // let released rows be collected
      this.rowCap?.releaseOne(t);
      this.emit(t);
    }
    this.head = i;
    if (i === h.length) {
      h.length = 0;
      this.head = 0;
    } else if (i > 1024 && i * 2 > h.length) {
      this.held = h.slice(i);
      this.head = 0;
    }
    this.lastWM = wm;
    if (this.markers) this.next.push(new Watermark(wm));
  }
}
