/**
 * Admission for push sources that cannot pause their producer (HTTP requests, websocket frames,
 * Redis pub/sub): messages wait in a bounded ring (`bufferLength`) and are published to the bus
 * in batches; while the bus refuses, they keep waiting and the queue is retried when it drains.
 * A full queue refuses the new message (eKuiper drops the new one; the caller counts it).
 */
import type { Bus } from "../core/bus.ts";
import { Ring } from "../core/ring.ts";
import type { SourceMessage } from "./message.ts";

/** Default `bufferLength` of a push subscription (rules-and-sinks.md §4). */
export const DEFAULT_PUSH_BUFFER = 1024;

/** Called once a message is admitted (true) or discarded because the source closed (false). */
export type Admitted = (ok: boolean) => void;

export class PushQueue {
  private readonly pending: Ring<SourceMessage>;
  private readonly waiters: Ring<Admitted | null>;
  /** Taken from the ring, not yet admitted (a refused batch is retried as is). */
  private batch: SourceMessage[] = [];
  private batchDone: (Admitted | null)[] = [];
  private scheduled = false;
  private waiting = false;
  private closed = false;

  constructor(
    private readonly bus: Bus<SourceMessage>,
    readonly capacity: number = DEFAULT_PUSH_BUFFER,
  ) {
    this.pending = new Ring(capacity);
    this.waiters = new Ring(capacity);
  }

  /** Messages waiting for admission. */
  get length(): number {
    return this.pending.length + this.batch.length;
  }

  /** Queues `msg`; false (nothing queued) when the queue is full or closed. */
  offer(msg: SourceMessage, done: Admitted | null = null): boolean {
    if (this.closed || this.length >= this.capacity) return false;
    this.pending.push(msg);
    this.waiters.push(done);
    // Messages arriving in the same tick cross the bus as one batch.
    if (!this.scheduled && !this.waiting) {
      this.scheduled = true;
      queueMicrotask(() => {
        this.scheduled = false;
        this.flush();
      });
    }
    return true;
  }

  /** Like offer, resolving when admitted (true) or discarded at close (false); null when full. */
  admit(msg: SourceMessage): Promise<boolean> | null {
    let resolve!: (ok: boolean) => void;
    const p = new Promise<boolean>((r) => (resolve = r));
    return this.offer(msg, resolve) ? p : null;
  }

  private flush(): void {
    const bus = this.bus;
    while (!this.closed) {
      if (this.batch.length === 0) {
        if (this.pending.length === 0) return;
        const n = Math.min(this.pending.length, bus.maxBatch, 1024);
        for (let i = 0; i < n; i++) {
          this.batch.push(this.pending.shift()!);
          this.batchDone.push(this.waiters.shift()!);
        }
      }
      // A shared stream may gain a subscriber with a smaller queue: publish what fits.
      const k = Math.min(this.batch.length, bus.maxBatch);
      if (!bus.publish(this.batch, 0, k)) {
        this.waiting = true;
        bus.onDrain(() => {
          this.waiting = false;
          this.flush();
        });
        return;
      }
      const done = this.batchDone;
      if (k === this.batch.length) {
        this.batch = [];
        this.batchDone = [];
      } else {
        this.batch = this.batch.slice(k);
        this.batchDone = done.slice(k);
      }
      for (let i = 0; i < k; i++) done[i]?.(true);
    }
  }

  /** Discards what waits (their callers hear false); later offers are refused. */
  close(): void {
    this.closed = true;
    for (const d of this.batchDone) d?.(false);
    this.batch = [];
    this.batchDone = [];
    while (this.pending.length > 0) {
      this.pending.shift();
      this.waiters.shift()?.(false);
    }
  }
}
