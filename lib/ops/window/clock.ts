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
  /**
   * Moves `timer` to `at` exactly as cancelling it and scheduling its function anew would (same
   * firing order among timers due at the same time), without allocating: a session timeout
   * pushed back by every row costs no garbage.
   */
  reschedule(timer: Timer, at: number): Timer;
}

/** A pending timer; its place in the heap is tracked so it can be moved in place. */
class Entry implements Timer {
  at: number;
  seq: number;
  readonly fn: () => void;
  cancelled = false;
  /** Index in the heap, -1 once fired or removed. */
  index = -1;
  constructor(at: number, seq: number, fn: () => void) {
    this.at = at;
    this.seq = seq;
    this.fn = fn;
  }
  cancel(): void {
    this.cancelled = true;
  }
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
    const e = new Entry(at, this.seq++, fn);
    this.push(e);
    return e;
  }

  reschedule(timer: Timer, at: number): Timer {
    const e = timer as Entry;
    if (e.cancelled || e.index < 0) return this.schedule(at, e.fn);
    e.at = at;
    e.seq = this.seq++;
    this.siftDown(e.index);
    this.siftUp(e.index);
    return e;
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

  private place(e: Entry, i: number): void {
    this.heap[i] = e;
    e.index = i;
  }

  private push(e: Entry): void {
    this.heap.push(e);
    e.index = this.heap.length - 1;
    this.siftUp(e.index);
  }

  private pop(): void {
    const h = this.heap;
    const top = h[0]!;
    top.index = -1;
    const last = h.pop()!;
    if (h.length === 0) return;
    this.place(last, 0);
    this.siftDown(0);
  }

  private siftUp(i: number): void {
    const h = this.heap;
    const e = h[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(e, h[p]!)) break;
      this.place(h[p]!, i);
      i = p;
    }
    this.place(e, i);
  }

  private siftDown(i: number): void {
    const h = this.heap;
    const e = h[i]!;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = l;
      if (l >= h.length) break;
      if (r < h.length && this.less(h[r]!, h[l]!)) m = r;
      if (!this.less(h[m]!, e)) break;
      this.place(h[m]!, i);
      i = m;
    }
    this.place(e, i);
  }
}

/**
 * Wall-clock time for live rules: timers run from one setTimeout armed for the earliest. At the
 * end of a pipe-mode input, `advance` fast-forwards so open windows close without waiting.
 */
export class WallClock extends VirtualClock {
  private handle: ReturnType<typeof setTimeout> | undefined;
  private armedAt = Infinity;
  /** Receives what a timer threw (a rule's window firing): it must not escape to the event loop. */
  onError: ((e: unknown) => void) | undefined;

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

  override reschedule(timer: Timer, at: number): Timer {
    const t = super.reschedule(timer, at);
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
      try {
        this.advance(Date.now());
      } catch (e) {
        if (!this.onError) throw e;
        this.onError(e);
        this.arm();
      }
    }, Math.max(0, next - Date.now()));
  }

  /** Stops the pending setTimeout (so the process can exit). */
  stop(): void {
    if (this.handle) clearTimeout(this.handle);
    this.handle = undefined;
    this.armedAt = Infinity;
  }
}
