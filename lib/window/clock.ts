/**
 * The clock every window takes (windows §3.1): the real clock for live rules, a virtual clock for
 * replay and tests. Timers fire in time order, before anything that happens later.
 */

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Current time, epoch ms. */
  now(): number;
  /** Runs `fn` when the clock reaches `at` (at once on the next advance if `at` is past). */
  schedule(at: number, fn: () => void): Timer;
}

interface Entry {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** Replay time: moves only when told to; firing due timers in (time, creation) order. */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly heap: Entry[] = [];

  constructor(start: number) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  schedule(at: number, fn: () => void): Timer {
    const e: Entry = { at, seq: this.seq++, fn, cancelled: false };
    this.push(e);
    return { cancel: () => void (e.cancelled = true) };
  }

  /** Fires every timer due at or before `t` in order (time advancing to each), then sets now = t. */
  advance(t: number): void {
    for (;;) {
      const top = this.heap[0];
      if (!top || top.at > t) break;
      this.pop();
      if (top.cancelled) continue;
      if (top.at > this.current) this.current = top.at;
      top.fn();
    }
    if (t > this.current) this.current = t;
  }

  /** Time of the earliest pending timer, if any. */
  nextTimer(): number | undefined {
    while (this.heap[0]?.cancelled) this.pop();
    return this.heap[0]?.at;
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

/**
 * Wall-clock time for live rules: timers run from one setTimeout armed for the earliest. At the
 * end of a pipe-mode input, `advance` fast-forwards so open windows close without waiting.
 */
export class WallClock extends VirtualClock {
  private handle: ReturnType<typeof setTimeout> | undefined;
  private armedAt = Infinity;

  constructor() {
    super(Date.now());
  }

  override now(): number {
    return Math.max(Date.now(), super.now());
  }

  override schedule(at: number, fn: () => void): Timer {
    const t = super.schedule(at, fn);
    this.arm();
    return t;
  }

  override advance(t: number): void {
    super.advance(t);
    this.arm();
  }

  private arm(): void {
    const next = this.nextTimer();
    if (next === undefined || next >= this.armedAt) return;
    if (this.handle) clearTimeout(this.handle);
    this.armedAt = next;
    this.handle = setTimeout(() => {
      this.handle = undefined;
      this.armedAt = Infinity;
      this.advance(Date.now());
    }, Math.max(0, next - Date.now()));
  }

  /** Stops the pending setTimeout (so the process can exit). */
  stop(): void {
    if (this.handle) clearTimeout(this.handle);
    this.handle = undefined;
    this.armedAt = Infinity;
  }
}
