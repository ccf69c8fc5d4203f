/**
 * The bus between a source and the rules reading it. Each subscriber (one rule's input from one
 * stream) owns a bounded ring-buffer queue. A batch is admitted by reserve-then-commit: every
 * blocking subscriber must have room for the whole batch, then it is appended to all of them, or
 * to none. A refused batch is the source's signal to stop reading (backpressure); `onDrain` tells
 * it when to try again. `drop-oldest` subscribers never refuse: they evict their oldest records
 * and count every one. A shared stream is one bus with many subscribers.
 */
import { Ring } from "./ring.ts";

/** Default capacity of a subscriber queue, in records. */
export const DEFAULT_SUBSCRIBER_CAPACITY = 4096;

/** A queueing-latency probe follows at most one record in this many. */
const PROBE_EVERY = 64;

/** What a full subscriber queue does: push back on the source (default), or evict its oldest. */
export type OverflowPolicy = "block" | "drop-oldest";

export class Subscription<T> {
  readonly queue: Ring<T>;
  readonly policy: OverflowPolicy;
  /** Records evicted by the drop-oldest policy. */
  dropped = 0;
  /** Called after records were appended (the consumer schedules its drain). */
  wake: () => void;
  /** Called with the number of records evicted by one admission. */
  onDrop: ((n: number) => void) | undefined;
  /**
   * A blocking subscriber's gate: true when the record at `at` of the batch being committed (its
   * place from the batch's first record) need not be queued (its consumer has accounted for it
   * already — a shared stream's predicate index). Asked once per record at commit, after `prepare`.
   */
  skip: ((at: number) => boolean) | undefined;
  /** Records were appended by the admission being committed (its wake is due). */
  appended = false;
  /**
   * Sampled queueing latency, µs: one probe record at a time (at most one per 64 admitted) is
   * followed from its admission to the take that removes it — one clock read per probe, none
   * per record.
   */
  latencyUs = 0;
  /** Records appended and removed (taken or evicted) so far; the probe is record number `probeSeq`. */
  admitted = 0;
  private removed = 0;
  probeSeq = -1;
  probeAt = 0;
  lastProbe = 0;
  /** A refused batch waits for this (blocking) subscriber's room (Bus.short). */
  short = false;
  /**
   * Parked: the bus queues nothing for it, since another subscriber (its leader) takes each record
   * for it too; a record the leader's `skip` accounts for, the leader's `skip` accounts for the
   * parked ones as well.
   */
  parked = false;
  private readonly bus: Bus<T>;

  constructor(bus: Bus<T>, capacity: number, policy: OverflowPolicy, wake: () => void) {
    this.bus = bus;
    this.queue = new Ring<T>(capacity);
    this.policy = policy;
    this.wake = wake;
    this.onDrop = undefined;
    this.skip = undefined;
  }

  get length(): number {
    return this.queue.length;
  }

  /** Moves up to `max` records into `out`; a refused publisher may then be resumed. */
  take(out: T[], max: number): number {
    const n = this.queue.takeInto(out, max);
    if (n > 0) {
      this.removed += n;
      if (this.probeSeq >= 0 && this.removed > this.probeSeq) {
        this.latencyUs = Math.round((performance.now() - this.probeAt) * 1000);
        this.probeSeq = -1;
      }
      const bus = this.bus;
      if (this.short && this.queue.free >= Math.min(bus.need, this.queue.capacity)) {
        this.short = false;
        bus.short--;
      }
      bus.released();
      bus.onTake?.();
    }
    return n;
  }

  /** Appends records admitted while it was parked that its leader had yet to take (an unpark). */
  adopt(records: readonly T[]): void {
    for (const r of records) this.queue.push(r);
    this.admitted += records.length;
  }

  /** `n` records were evicted (drop-oldest). */
  evicted(n: number): void {
    this.removed += n;
  }

  close(): void {
    this.bus.unsubscribe(this);
  }
}

export class Bus<T> {
  private subs: Subscription<T>[] = [];
  private waiting: (() => void)[] = [];
  /** Size of the last refused batch: what must fit before waiters are resumed. */
  need = 0;
  /**
   * The blocking subscribers that lack room for `need` while publishers wait: each take updates
   * its own subscriber, so a take asks no other subscriber (a shared stream has thousands).
   */
  short = 0;
  /** Batches refused so far (how often the source was paused). */
  refusals = 0;
  /**
   * Called after a subscriber took records: a source that acknowledges only what its rules have
   * taken (JetStream) learns here when to, reading `backlog`.
   */
  onTake: (() => void) | undefined = undefined;
  /** Called once per admitted batch before it is committed (a shared stream decodes and classifies it once here). */
  prepare: ((batch: readonly T[], from: number, to: number) => void) | undefined = undefined;

  subscribe(capacity: number, policy: OverflowPolicy, wake: () => void): Subscription<T> {
    const s = new Subscription(this, capacity, policy, wake);
    this.subs.push(s);
    if (policy === "block" && capacity < this.smallest) this.smallest = capacity;
    return s;
  }

  unsubscribe(s: Subscription<T>): void {
    const i = this.subs.indexOf(s);
    if (i >= 0) this.subs.splice(i, 1);
    if (s.short) {
      s.short = false;
      this.short--;
    }
    this.resize();
    this.released();
  }

  /** Records admitted that some subscriber has not taken yet (the longest subscriber queue). */
  get backlog(): number {
    let m = 0;
    for (const s of this.subs) if (s.queue.length > m) m = s.queue.length;
    return m;
  }

  get subscribers(): number {
    return this.subs.length;
  }

  /** The largest batch `publish` accepts: the smallest blocking subscriber's capacity (kept as subscribers come and go). */
  get maxBatch(): number {
    return this.smallest;
  }

  private smallest = Infinity;

  private resize(): void {
    let m = Infinity;
    for (const s of this.subs) if (s.policy === "block" && s.queue.capacity < m) m = s.queue.capacity;
    this.smallest = m;
  }

  /**
   * Admits `batch[from..to)` to every subscriber or to none; false when a blocking subscriber
   * lacks room (nothing was appended anywhere). With no subscriber the batch is accepted and gone.
   */
  publish(batch: readonly T[], from = 0, to = batch.length): boolean {
    const n = to - from;
    if (n <= 0) return true;
    if (!this.reserve(n)) return false;
    this.prepare?.(batch, from, to);
    const subs = this.subs;
    // Commit.
    let now = 0;
    for (let i = 0; i < subs.length; i++) {
      const s = subs[i]!;
      if (s.parked) {
        s.appended = false;
        continue;
      }
      const q = s.queue;
      let start = from;
      if (q.free < n) {
        // drop-oldest: evict what the batch needs; a batch larger than the queue keeps its tail.
        const over = n - q.capacity;
        let dropped = q.drop(Math.min(q.length, n - q.free));
        if (over > 0) {
          dropped += over;
          start = from + over;
        }
        s.dropped += dropped;
        s.evicted(dropped - Math.max(0, over));
        s.onDrop?.(dropped);
      }
      const skip = s.skip;
      let added = to - start;
      if (skip === undefined) for (let j = start; j < to; j++) q.push(batch[j]!);
      else {
        for (let j = start; j < to; j++) {
          if (skip(j - from)) added--;
          else q.push(batch[j]!);
        }
      }
      if (added > 0 && s.probeSeq < 0 && (s.admitted === 0 || s.admitted - s.lastProbe >= PROBE_EVERY)) {
        s.probeSeq = s.lastProbe = s.admitted;
        s.probeAt = now === 0 ? (now = performance.now()) : now;
      }
      s.admitted += added;
      s.appended = added > 0;
    }
    for (let i = 0; i < subs.length; i++) {
      const s = subs[i]!;
      if (s.appended) s.wake();
    }
    return true;
  }

  /**
   * True when a batch of `n` records would be admitted now: every blocking subscriber has room.
   * A false answer counts as a refusal (`onDrain` then waits for room for `n`). Lets a publisher
   * that feeds several buses (an MQTT connection shared by rules) check them all before it
   * commits to any.
   */
  reserve(n: number): boolean {
    const subs = this.subs;
    for (let i = 0; i < subs.length; i++) {
      const s = subs[i]!;
      if (s.policy !== "block") continue;
      if (n > s.queue.capacity) throw new RangeError(`batch of ${n} exceeds subscriber capacity ${s.queue.capacity}`);
      if (s.queue.free < n) {
        if (n > this.need) this.need = n;
        this.refusals++;
        this.recount();
        return false;
      }
    }
    return true;
  }

  /** Marks the blocking subscribers lacking room for `need` (after a refusal raised it). */
  private recount(): void {
    let short = 0;
    for (const s of this.subs) {
      s.short = s.policy === "block" && s.queue.free < Math.min(this.need, s.queue.capacity);
      if (s.short) short++;
    }
    this.short = short;
  }

  /** Calls `fn` once, as soon as the last refused batch would fit (at once if it already does). */
  onDrain(fn: () => void): void {
    this.waiting.push(fn);
    this.recount();
    this.released();
  }

  /** A subscriber freed room (or left): resume waiting publishers when the refused batch fits. */
  released(): void {
    if (this.waiting.length === 0 || this.short > 0) return;
    const w = this.waiting;
    this.waiting = [];
    this.need = 0;
    for (const f of w) f();
  }
}
