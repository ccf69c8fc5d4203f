/**
 * A fixed-capacity FIFO ring buffer (STYLE: queues are ring buffers, never `Array#shift`). Every
 * queue of the runtime is one of these; what happens when it is full is the owner's decision.
 */
export class Ring<T> {
  readonly capacity: number;
  private readonly buf: (T | undefined)[];
  private head = 0;
  private len = 0;

  constructor(capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`ring capacity must be >= 1, got ${capacity}`);
    this.capacity = capacity;
    this.buf = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.len;
  }

  get free(): number {
    return this.capacity - this.len;
  }

  /** Appends; false (and nothing changes) when full. */
  push(x: T): boolean {
    if (this.len === this.capacity) return false;
    let i = this.head + this.len;
    if (i >= this.capacity) i -= this.capacity;
    this.buf[i] = x;
    this.len++;
    return true;
  }

  /** The oldest item, or undefined when empty. */
  peek(): T | undefined {
    return this.len === 0 ? undefined : this.buf[this.head];
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.len === 0) return undefined;
    const x = this.buf[this.head];
    this.buf[this.head] = undefined;
    if (++this.head === this.capacity) this.head = 0;
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
    for (let i = 0; i < this.len; i++) out.push(this.buf[(this.head + i) % this.capacity]!);
    return out;
  }

  clear(): void {
    this.buf.fill(undefined);
    this.head = 0;
    this.len = 0;
  }
}
