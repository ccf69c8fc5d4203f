/**
 * A bounded FIFO ring buffer (STYLE: queues are ring buffers, never `Array#shift`). Every queue
 * of the runtime is one of these; what happens when it is full is the owner's decision.
 *
 * The slots grow by doubling up to `capacity` instead of being allocated up front: a rule's bus
 * subscription (4,096) and sink queue (10,000 + headroom) would otherwise allocate ~120 KB per
 * start that an idle rule never touches, and in the daemon that churn (create/start/stop/delete)
 * is what kept the allocator's resident high-water mark climbing.
 */
const INITIAL = 16;

export class Ring<T> {
  readonly capacity: number;
  private buf: (T | undefined)[];
  private head = 0;
  private len = 0;

  constructor(capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`ring capacity must be >= 1, got ${capacity}`);
    this.capacity = capacity;
    this.buf = new Array<T | undefined>(Math.min(capacity, INITIAL));
  }

  get length(): number {
    return this.len;
  }

  get free(): number {
    return this.capacity - this.len;
  }

  /** Appends; false (and nothing changes) when full. */
  push(x: T): boolean {
    const buf = this.buf;
    if (this.len === buf.length) {
      if (this.len === this.capacity) return false;
      this.grow();
      return this.push(x);
    }
    let i = this.head + this.len;
    if (i >= buf.length) i -= buf.length;
    buf[i] = x;
    this.len++;
    return true;
  }

  /** Doubles the slots (at most to capacity), unwrapping the items to the front. */
  private grow(): void {
    const old = this.buf;
    const next = new Array<T | undefined>(Math.min(this.capacity, old.length * 2));
    for (let i = 0; i < this.len; i++) {
      let j = this.head + i;
      if (j >= old.length) j -= old.length;
      next[i] = old[j];
    }
    this.buf = next;
    this.head = 0;
  }

  /** The oldest item, or undefined when empty. */
  peek(): T | undefined {
    return this.len === 0 ? undefined : this.buf[this.head];
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.len === 0) return undefined;
    const buf = this.buf;
    const x = buf[this.head];
    buf[this.head] = undefined;
    if (++this.head === buf.length) this.head = 0;
    this.len--;
    return x;
  }

  /** Removes up to `n` oldest items; returns how many were removed. */
  drop(n: number): number {
    const k = Math.min(n, this.len);
    for (let i = 0; i < k; i++) this.shift();
    return k;
  }

  /** Moves up to `max` oldest items into `out` (appended); returns the count. */
  takeInto(out: T[], max: number): number {
    const k = Math.min(max, this.len);
    for (let i = 0; i < k; i++) out.push(this.shift()!);
    return k;
  }

  /** Items oldest first, without removing them. */
  toArray(): T[] {
    const out: T[] = [];
    const n = this.buf.length;
    for (let i = 0; i < this.len; i++) out.push(this.buf[(this.head + i) % n]!);
    return out;
  }

  /** Empties the ring and lets go of grown slots. */
  clear(): void {
    this.buf = new Array<T | undefined>(Math.min(this.capacity, INITIAL));
    this.head = 0;
    this.len = 0;
  }
}
