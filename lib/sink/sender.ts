/**
 * The sending half of a sink pipeline: the bounded queue (in memory, or the cache's pages), the
 * worker that drains it into the connector in order, retrying a failed send every
 * `resendInterval` or handing it to the resend instance (`resendAlterQueue`, resend.ts), a direct
 * connector's send in the caller's turn, and the room the rule asks before it pushes more (what
 * waits in front of the queue, the pipeline's backlog, counts against it). pipeline.ts makes the
 * items; this sends them.
 */
import type { Level } from "../log.ts";
import { errorText, IoError } from "../errors.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import type { ConnectionReporter } from "../core/connection.ts";
import { cacheDb, SinkCacheStore } from "../store/sink-cache.ts";
import type { SinkCommon } from "./common.ts";
import { SinkItem, type SinkConnector } from "./connector.ts";
import { elapsedUs, type Payload } from "./payload.ts";
import { CachedQueue } from "./cached-queue.ts";
import { MemoryQueue, type SinkQueue } from "./queue.ts";
import { ResendSink } from "./resend.ts";

/** What a sender needs of the action (the pipeline's init carries it). */
export interface SenderConf {
  readonly ruleId: string;
  readonly common: SinkCommon;
  readonly connector: SinkConnector;
  /** The second instance of the connector for `resendAlterQueue` (`topic` = `resendDestination`). */
  readonly resendConnector?: SinkConnector;
  /** Where the cache keeps its disk pages (`<data>/cache.db`). */
  readonly dataDir: string;
  log(line: string, level?: Level): void;
}

/** What waits in front of the queue (the pipeline's backlog): counted against `room()`, stopped when the sender aborts. */
export interface Upstream {
  readonly length: number;
  stop(): void;
}

export class SinkSender {
  /** The resend instance (`resendAlterQueue`), else null. */
  readonly resend: ResendSink | null;
  /** What the sender reads of its SenderConf after it is built (not the whole pipeline's init). */
  private readonly ruleId: string;
  private readonly common: SinkCommon;
  private readonly log: SenderConf["log"];
  private readonly queue: SinkQueue;
  private readonly conn: SinkConnector;
  private readonly retryMs: number;
  /** The main worker is sending an item. */
  private sending = false;
  /** SinkConnector.direct, with the queue in memory and no resend instance: `sendDirect` may send. */
  readonly direct: boolean;
  /** The item a direct send reuses. */
  private readonly scratch = new SinkItem("", null, 0);
  /** Sends so far (sampled timing, see `work`). */
  private sends = 0;
  /**
   * The connector is ready and the queue was found empty: no worker runs until `wake` starts one.
   * An idle sink holds no suspended worker (its frame and promises are a good part of an idle
   * rule's memory, thousands of rules on one stream).
   */
  private idle = false;
  private roomWaiters: (() => void)[] = [];
  /** The worker running (undefined before `start` and while idle). */
  private worker: Promise<void> | undefined;
  private ending = false;
  /** The last send failed with an IO error and is being retried. */
  private failing = false;
  private aborted = false;
  private sleepTimer: ReturnType<typeof setTimeout> | undefined;
  private sleepDone: (() => void) | undefined;
  /** Items dropped by the sink: failed sends without retry, evictions, unsent at stop. */
  lost = 0;
  /** Sends of the main connector that completed (SinkConnector.confirmed counts in them). */
  private sentOk = 0;
  /** The tags of the completed sends the connector may not have confirmed yet, oldest first from `ucHead`. */
  private ucTags: number[] = [];
  private ucHead = 0;
  /** The tag of the oldest item handed to the resend instance since it was last settled; Infinity: settled. */
  private resendFloor = Infinity;

  /**
   * `sink` and `cacheNode` (the cache on, no alter queue) are the pipeline's nodes the sender
   * counts in; `mark` re-encodes an item for the resend instance (`resendIndicatorField`).
   */
  constructor(
    conf: SenderConf,
    private readonly name: string,
    private readonly sink: NodeMetrics,
    private readonly cacheNode: NodeMetrics | null,
    private readonly status: ConnectionReporter,
    mark: ((item: SinkItem) => SinkItem) | null,
    private readonly upstream: Upstream,
  ) {
    const c = conf.common;
    this.ruleId = conf.ruleId;
    this.common = c;
    this.log = conf.log;
    this.conn = conf.connector;
    const alter = c.cache.enableCache && c.cache.resendAlterQueue && !!conf.resendConnector;
    this.resend = alter
      ? new ResendSink({
          ruleId: conf.ruleId,
          name,
          cacheName: `${name}_cache`,
          conf: c.cache,
          connector: conf.resendConnector!,
          dataDir: conf.dataDir,
          mark,
          mainBusy: () => this.sending || this.queue.length > 0,
          log: conf.log,
        })
      : null;
    const onDrop = (n: number) => {
      this.lost += n;
      const node = this.cacheNode ?? this.sink;
      node.exception(`buffer full, drop ${n} message(s) from ${name}`, Date.now());
    };
    this.queue = cacheNode !== null
      ? new CachedQueue(c.cache, new SinkCacheStore(cacheDb(conf.dataDir), `sink/${conf.ruleId}/${name}`), onDrop)
      : new MemoryQueue(c.bufferLength, onDrop);
    // With the alter queue the main sink never retries: failures go to the resend instance.
    const retry = alter ? 0 : c.cache.resendInterval > 0 ? c.cache.resendInterval : c.cache.enableCache ? 100 : 0;
    this.retryMs = retry;
    this.direct = conf.connector.direct === true && !c.cache.enableCache && this.resend === null;
  }

  /** Connects the connector; `start` starts the worker, which waits for the connection. */
  connect(): Promise<void> {
    return Promise.resolve(this.conn.open({ ruleId: this.ruleId, name: this.name, status: this.status, metrics: this.sink, log: this.log }));
  }

  start(ready: Promise<void>): void {
    this.worker = this.opening(ready);
    this.resend?.open();
    // Items restored from a previous run's cache are sent first.
    if (this.queue.length > 0) this.wake();
  }

  /** How many more results the rule may push before it should wait (Infinity with the cache). */
  room(): number {
    return this.queue.room() - this.upstream.length;
  }

  /** Calls `fn` once when the queue has room again; one call per waiter however often it asks. */
  onRoom(fn: () => void): void {
    if (!this.roomWaiters.includes(fn)) this.roomWaiters.push(fn);
    this.checkRoom();
  }

  /** Calls the room waiters once there is room (also when what waits upstream has drained). */
  checkRoom(): void {
    if (this.roomWaiters.length === 0 || this.room() <= 0) return;
    const w = this.roomWaiters;
    this.roomWaiters = [];
    for (const f of w) f();
  }

  /** Queues `item` for the worker (counted on the cache node; `timed`: its push is timed). */
  enqueue(item: SinkItem, now: number, timed: boolean): void {
    const c = this.cacheNode;
    if (c) {
      c.recordsIn++;
      c.recordsOut++;
      c.lastInvocation = now;
    }
    this.sink.recordsIn++;
    // The cache node's work is the queue push (a full page spills to disk).
    const t0 = timed && c ? performance.now() : 0;
    this.queue.push(item);
    if (t0) c!.processLatencyUs = elapsedUs(t0);
    this.sink.bufferLength = this.queue.memLength;
    if (c) c.bufferLength = this.queue.length - this.queue.memLength;
    this.wake();
  }

  /**
   * A direct connector's send of `payload`, in the pipeline's turn, when the worker waits on an
   * empty queue (in order); false when it must be queued (`enqueue`). Timed like the worker's
   * synchronous sends. A failure is counted and handled as the worker handles one (a direct sink
   * has neither cache nor resend queue): an I/O error with a retry interval leaves a copy queued
   * for the worker to send after the interval, anything else drops the result (lost).
   */
  sendDirect(payload: Payload, props: SinkItem["props"], rows: number, tp: string | null, now: number, tag: number): boolean {
    if (!this.idle) return false;
    const item = this.scratch;
    item.payload = payload;
    item.props = props;
    item.rows = rows;
    item.traceparent = tp;
    item.tag = tag;
    const m = this.sink;
    m.recordsIn++;
    const timed = (++this.sends & 63) === 1;
    const t0 = timed ? performance.now() : 0;
    try {
      void this.conn.send(item);
    } catch (e) {
      m.exception(errorText(e), Date.now());
      if (e instanceof IoError && this.retryMs > 0) {
        this.failing = true;
        this.queue.push(new SinkItem(item.payload, item.props, item.rows, null, item.traceparent, item.key, item.tag));
        m.bufferLength = this.queue.memLength;
        this.wake();
        return true;
      }
      this.dropFailed(e);
      return true;
    }
    m.recordsOut++;
    m.messagesProcessed += item.rows;
    m.lastInvocation = now;
    if (timed) m.processLatencyUs = elapsedUs(t0);
    this.completed(tag);
    return true;
  }

  /** A send of an item tagged `tag` completed: until the connector confirms it, it holds the watermark back. */
  private completed(tag: number): void {
    if (this.conn.confirmed === undefined) return;
    this.sentOk++;
    this.ucTags.push(tag);
    if (this.ucTags.length - this.ucHead > 64) this.prune();
  }

  /** Forgets the completed sends the connector has confirmed (a prefix: SinkConnector.confirmed). */
  private prune(): void {
    const left = this.ucTags.length - this.ucHead;
    if (left === 0) return;
    const keep = Math.max(0, this.sentOk - this.conn.confirmed!());
    if (keep >= left) return;
    this.ucHead += left - keep;
    if (keep === 0) {
      this.ucTags.length = 0;
      this.ucHead = 0;
    } else if (this.ucHead > 1024 && this.ucHead * 2 > this.ucTags.length) {
      this.ucTags = this.ucTags.slice(this.ucHead);
      this.ucHead = 0;
    }
  }

  /** Hands `item` to the resend instance (the alter queue). */
  private toResend(item: SinkItem, now: number): void {
    if (this.resendFloor === Infinity) this.resendFloor = item.tag;
    this.resend!.take(item, now);
  }

  /**
   * A lower bound of the lowest tag (SinkItem.tag) among the items given to this sender that are
   * not yet safe, Infinity when all are. Safe: delivered — sent and, where the connector confirms,
   * confirmed; dropped (failed and not retried, evicted) counts as done. With `!delivered` an item
   * written through to the cache's disk pages is safe too (a kill -9 loses nothing the queue
   * holds). Items are given in order of their tags, and the queue, the confirmations (a prefix)
   * and the resend queue (as a whole: its items may be delivered in another order) each hold back
   * from their oldest item on.
   */
  lowestUnsafe(delivered: boolean): number {
    let low = delivered || !this.queue.writtenThrough ? this.queue.headTag() : Infinity;
    if (this.conn.confirmed !== undefined) {
      this.prune();
      if (this.ucHead < this.ucTags.length) low = Math.min(low, this.ucTags[this.ucHead]!);
    }
    if (this.resendFloor !== Infinity) {
      if (this.resend!.settled) this.resendFloor = Infinity;
      else low = Math.min(low, this.resendFloor);
    }
    return low;
  }

  /** A failed send that is not retried: the result is lost (an unexpected error is also logged). */
  private dropFailed(e: unknown): void {
    if (!(e instanceof IoError)) this.log(`sink ${this.name} of rule ${this.ruleId} drops a message: ${errorText(e)}`);
    this.lost++;
  }

  /** Starts a worker if none runs (an idle one; before the connector is ready the first one waits for it). */
  private wake(): void {
    if (!this.idle) return;
    this.idle = false;
    this.worker = this.resume();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      this.sleepDone = r;
      this.sleepTimer = setTimeout(r, ms);
    });
  }

  /** The first worker: waits for the connection, then sends what is queued. */
  private async opening(ready: Promise<void>): Promise<void> {
    try {
      await ready;
    } catch (e) {
      this.sink.exception(errorText(e), Date.now());
      return;
    }
    await this.work();
  }

  /** A worker started by `wake`: from the next microtask, as a waiting worker would resume. */
  private async resume(): Promise<void> {
    await undefined;
    // Woken with a direct send's failure queued: it is retried after the interval, as in `work`.
    if (this.failing && !this.aborted) await this.sleep(this.retryMs);
    await this.work();
  }

  /** Sends what is queued, in order, until the queue is empty (the worker then goes idle) or the sender ends or aborts. */
  private async work(): Promise<void> {
    const q = this.queue;
    const m = this.sink;
    const resend = this.resend;
    const resendFirst = resend !== null && this.common.cache.resendPriority > 0;
    // A send that completes synchronously is timed like the operators' records (operator.ts): the
    // first, then one in 64; once the connector has answered with a promise, every send is timed.
    // Its `last_invocation` is stamped once before the worker next yields (no one reads the metrics
    // in between), so a run of synchronous sends costs no clock read per item.
    let async = false;
    let unstamped = false;
    for (;;) {
      if (this.aborted) break;
      const item = q.peek();
      if (item === undefined) {
        if (unstamped) {
          m.lastInvocation = Date.now();
          unstamped = false;
        }
        if (this.ending) return;
        resend?.mainIdle();
        this.idle = true;
        this.worker = undefined;
        return;
      }
      // resendPriority 1: while older items wait for a resend, fresh ones queue behind them.
      if (resendFirst && resend.length > 0) {
        this.toResend(item, Date.now());
        q.shift();
        this.afterShift();
        continue;
      }
      const timed = async || (++this.sends & 63) === 1;
      const t0 = timed ? performance.now() : 0;
      let waited = false;
      this.sending = true;
      try {
        const r = this.conn.send(item);
        if (r) {
          waited = async = true;
          await r;
        }
      } catch (e) {
        this.sending = false;
        if (this.aborted) break;
        const now = Date.now();
        if (unstamped) {
          m.lastInvocation = now;
          unstamped = false;
        }
        m.exception(errorText(e), now);
        if (e instanceof IoError && resend) {
          this.toResend(item, now);
          q.shift();
          this.afterShift();
          continue;
        }
        if (e instanceof IoError && this.retryMs > 0) {
          this.failing = true;
          await this.sleep(this.retryMs);
          continue;
        }
        this.dropFailed(e);
        q.shift();
        this.afterShift();
        continue;
      }
      this.sending = false;
      this.failing = false;
      m.recordsOut++;
      m.messagesProcessed += item.rows;
      if (waited || timed) {
        m.lastInvocation = Date.now();
        unstamped = false;
      } else unstamped = true;
      // A send that was not timed (sampled, synchronous) keeps the last sampled latency.
      if (timed) m.processLatencyUs = elapsedUs(t0);
      this.completed(item.tag);
      q.shift();
      this.afterShift();
    }
    if (unstamped) m.lastInvocation = Date.now();
  }

  private afterShift(): void {
    this.sink.bufferLength = this.queue.memLength;
    if (this.cacheNode) this.cacheNode.bufferLength = this.queue.length - this.queue.memLength;
    if (this.roomWaiters.length) this.checkRoom();
  }

  /** Every item this sink has not sent is on disk (cache on, no alter queue). */
  get journaled(): boolean {
    return this.queue instanceof CachedQueue;
  }

  /** Makes what was queued durable now (the cache's write-through, cached-queue.ts). */
  flush(): void {
    this.queue.flush();
  }

  /** End of input: the worker finishes what is queued. */
  end(): void {
    this.ending = true;
    this.wake();
  }

  /** `end` was called. */
  get ended(): boolean {
    return this.ending;
  }

  /** Items waiting to be sent (the queue and the resend queue). */
  get queued(): number {
    return this.queue.length + (this.resend?.length ?? 0);
  }

  /** Items dropped by the cache's disk budget or the queue's headroom. */
  get dropped(): number {
    return this.queue.dropped + (this.resend?.dropped ?? 0);
  }

  /**
   * Stops after the queue drains or `graceMs` passes, whichever is first (after `end`); what is
   * left is saved for the next run (cache, unless cleanCacheAtStop) or counted as lost.
   */
  async close(graceMs: number): Promise<void> {
    // A sink that is down gets no grace: its items go to the cache (or are counted lost) at once.
    if (this.worker && !this.failing) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.worker, new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    }
    this.aborted = true;
    this.upstream.stop();
    if (this.sleepTimer) clearTimeout(this.sleepTimer);
    this.sleepDone?.();
    this.wake();
    const resend = this.resend;
    const cache = this.common.cache;
    if (this.queue instanceof CachedQueue) this.queue.stop(cache.cleanCacheAtStop);
    else if (resend) {
      // Not sent yet: kept with the resend queue for the next run.
      const now = Date.now();
      for (let it = this.queue.peek(); it !== undefined; it = this.queue.peek()) {
        resend.take(it, now);
        this.queue.shift();
      }
    } else {
      this.lost += this.queue.length;
      this.queue.stop(true);
    }
    this.sink.bufferLength = 0;
    if (resend) {
      await resend.close(cache.cleanCacheAtStop);
      this.lost += resend.lost;
    }
    try {
      await this.conn.close();
    } catch (e) {
      this.log(`sink ${this.name} of rule ${this.ruleId} fails to close: ${errorText(e)}`);
    }
    this.status.detach(this.sink);
  }
}
