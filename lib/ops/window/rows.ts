/** The buffered evaluator's holder (windows §3.4): the rows themselves, scanned at each firing. */
import type { Tuple, WindowRange } from "../../expr/row.ts";
import { Collection } from "../../core/item.ts";
import type { CountHolder, GridHolder, HopHolder, PaneHolder } from "./holder.ts";
import type { HeldRows } from "./held-rows.ts";

/** The rows, each let go from `rowCap` (the rule's cap) when a firing takes it out. */
export class RowBuffer implements PaneHolder, HopHolder, CountHolder {
  protected buffer: Tuple[] = [];

  constructor(private readonly rowCap: HeldRows | null) {}

  add(t: Tuple): void {
    this.buffer.push(t);
  }

  held(): boolean {
    return this.buffer.length > 0;
  }

  firstTs(): number {
    return this.buffer[0]!.ts;
  }

  lastTs(): number {
    return this.buffer[this.buffer.length - 1]!.ts;
  }

  takeBefore(end: number, range: WindowRange): Collection {
    const inside: Tuple[] = [];
    const rest: Tuple[] = [];
    // The bytes let go are summed in the same pass: a second one over a big window's rows costs as much again.
    let bytes = 0;
    for (const t of this.buffer) {
      if (t.ts < end) {
        inside.push(t);
        bytes += t.size;
      } else rest.push(t);
    }
    this.buffer = rest;
    this.rowCap?.releaseBytes(bytes, inside.length);
    return new Collection(inside, range);
  }

  takeHop(left: number, end: number, range: WindowRange): Collection {
    let i = 0;
    while (i < this.buffer.length && this.buffer[i]!.ts < left) i++;
    this.rowCap?.release(this.buffer, 0, i);
    const kept = this.buffer.slice(i);
    const inside = kept.filter((t) => t.ts < end);
    // [quirk] with no row inside, the whole buffer is cleared, later rows included.
    const from = inside.length ? kept.indexOf(inside[0]!) : kept.length;
    this.rowCap?.release(kept, 0, from);
    this.buffer = kept.slice(from);
    return new Collection(inside, range);
  }

  /** The last n rows if at least n are held; the n − 1 newest stay for the next window. */
  takeCount(_i: number, n: number, now: number): Collection | null {
    if (this.buffer.length < n) return null;
    const rows = this.buffer.slice(this.buffer.length - n);
    this.rowCap?.release(this.buffer, 0, this.buffer.length - n + 1);
    this.buffer = rows.slice(1);
    return new Collection(rows, { start: now, end: now, trigger: now });
  }

  save(): Record<string, unknown> {
    return { rows: this.buffer };
  }

  load(s: Record<string, unknown>): void {
    this.buffer = s.rows as Tuple[];
    this.rowCap?.restored(this.buffer);
  }
}

/**
 * Event time, TUMBLINGWINDOW / HOPPINGWINDOW: the released rows, scanned at each watermark exactly
 * as processing time does (§3.4, δ = 0). The watermark releases rows in timestamp order, so the
 * rows older than a window's end are a prefix of the buffer.
 */
export class RowGrid extends RowBuffer implements GridHolder {
  /** The first window is placed once the watermark has reached the first row. */
  opening(wm: number): number | undefined {
    const first = this.buffer[0];
    return !first || first.ts > wm ? undefined : first.ts;
  }

  settle(_nextEnd: number): void {}

  own(nextEnd: number | undefined): unknown {
    return nextEnd ?? null;
  }

  loadOwn(s: unknown): number | undefined {
    return (s as number | null) ?? undefined;
  }
}
