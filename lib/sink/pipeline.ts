/**
 * One action of a rule: the sink helper nodes (rest-api.md §6.3: batch, transform, batchWriter,
 * encode, compress, encrypt, cache), the sink's bounded queue and the worker that drains it into
 * the connector. `push` runs synchronously in the rule's chain and never blocks: the rule asks
 * `room()` before feeding more records and `onRoom` tells it when to resume, so a slow sink pushes
 * back on the rule and, through the bus, on the source. With `resendAlterQueue` the failed items
 * go to a resend instance of the connector behind its own cache (resend.ts).
 *
 * A result too big to encode in one turn of the event loop waits in the backlog (backlog.ts),
 * which counts against `room()` and encodes it in slices, in order, ahead of later results.
 */
import type { Level } from "../log.ts";
import { EmissionKeys } from "./emission-keys.ts";
import { errorText, failureText, IoError, RowError } from "../errors.ts";
import { Emission, type Item } from "../core/item.ts";
import { NodeMetrics } from "../core/metrics.ts";
import type { SinkNode } from "../core/sink.ts";
import { cacheDb, SinkCacheStore } from "../store/sink-cache.ts";
import type { SinkCommon } from "./common.ts";
import type { SchemaRegistry } from "../formats/schema-registry.ts";
import { SinkItem, SinkSource, type SinkConnector } from "./connector.ts";
import { ConnectionReporter } from "../core/connection.ts";
import { elapsedUs, PayloadEncoder, tupleData, type Payload } from "./payload.ts";
import { Backlog } from "./backlog.ts";
import { SLICE_OUTPUTS as SLICE } from "../core/turn.ts";
import { CachedQueue } from "./cached-queue.ts";
import { MemoryQueue, type SinkQueue } from "./queue.ts";
import { ResendSink } from "./resend.ts";
import { Transformer, type Output } from "./transform.ts";

export interface SinkPipelineInit {
  readonly ruleId: string;
  readonly type: string;
  readonly index: number;
  /** A graph rule's sink node name (graph-rules.md §5): names the sink `sink_<node>` and its helpers `<node>_<k>_…`. */
  readonly node?: string;
  /** The action's property object (templated values are rendered per item). */
  readonly props: Record<string, unknown>;
  readonly common: SinkCommon;
  readonly connector: SinkConnector;
  /** The second instance of the connector for `resendAlterQueue` (`topic` = `resendDestination`). */
  readonly resendConnector?: SinkConnector;
  /** Where the cache keeps its disk pages (`<data>/cache.db`). */
  readonly dataDir: string;
  /** base64 AES key (`basic.aesKey`) for `encryption: aes`. */
  readonly aesKey?: string;
  /** The registered schemas `format: "protobuf"` encodes with (`schemaId`). */
  readonly schemas?: SchemaRegistry;
  /** False while the run may not act as its input's owner (a group partition whose lease lapsed): results are not sent, and counted as exceptions. */
  readonly fence?: () => boolean;
  log(line: string, level?: Level): void;
}

const FENCED = "not sent: this member may no longer own the partition (its lease lapsed or a newer owner claimed it); the owner recomputes it from the group's checkpoint";

export class SinkPipeline implements SinkNode {
  readonly metrics: NodeMetrics[];
  readonly name: string;
  readonly status = new ConnectionReporter();
  /** SinkNode.traceparent: set by a traced rule around `push`; carried on the items it makes. */
  traceparent: string | null = null;
  private readonly sink: NodeMetrics;
  private readonly batchNode: NodeMetrics | null;
  private readonly transformNode: NodeMetrics;
  private readonly cacheNode: NodeMetrics | null;
  private readonly payloads: PayloadEncoder;
  private readonly resend: ResendSink | null;
  /** Outputs are kept on each item so a resend can re-encode them (`resendIndicatorField`). */
  private readonly keepSource: boolean;
  /** The main worker is sending an item. */
  private sending = false;
  /** SinkConnector.direct, with the queue in memory and no resend instance. */
  private readonly direct: boolean;
  /** The item a direct send reuses. */
  private readonly scratch = new SinkItem("", null, 0);
  /** Sends so far (sampled timing, see `work`). */
  private sends = 0;
  private readonly transformer: Transformer;
  /** Results pushed so far; one in 64 has its helper nodes timed (process_latency_us). */
  private pushes = 0;
  private readonly queue: SinkQueue;
  private readonly conn: SinkConnector;
  private readonly c: SinkCommon;
  private readonly retryMs: number;
  private readonly outs: Output[] = [];
  /** Results waiting to be encoded across turns of the event loop; see the header. */
  private readonly backlog: Backlog;
  private pending: Output[] = [];
  private batchCount = 0;
  private linger: ReturnType<typeof setInterval> | undefined;
  private wakeFn: (() => void) | undefined;
  private roomWaiters: (() => void)[] = [];
  private worker: Promise<void> | undefined;
  private ending = false;
  /** The last send failed with an IO error and is being retried. */
  private failing = false;
  private aborted = false;
  private sleepTimer: ReturnType<typeof setTimeout> | undefined;
  private sleepDone: (() => void) | undefined;
  /** Items dropped by the sink: failed sends without retry, evictions, unsent at stop. */
  lost = 0;
  /** A keyed connector's item keys (SinkItem.key), checkpointed (`snapshot`); null for the others. */
  private readonly keys: EmissionKeys | null;
  /**
   * The time of a pushed result (ms): a rule sets its own clock, which reads the time once per
   * batch it drains, so results pushed in a batch cost no clock read each.
   */
  clock: () => number = Date.now;

  constructor(private readonly init: SinkPipelineInit) {
    const { type, index, common: c } = init;
    this.c = c;
    this.conn = init.connector;
    this.name = init.node ?? `${type}_${index}`;
    const base = this.name;
    const bytes = init.connector.bytes;
    const batching = c.batchSize > 0 || c.lingerInterval > 0;
    const alter = c.cache.enableCache && c.cache.resendAlterQueue && !!init.resendConnector;
    const cached = c.cache.enableCache && !c.cache.resendAlterQueue;
    let k = 0;
    const op = (helper: string) => new NodeMetrics("op", `${base}_${k++}_${helper}`);
    this.batchNode = batching ? op("batch") : null;
    this.transformNode = op("transform");
    this.payloads = new PayloadEncoder(c, bytes, type, batching, init.aesKey, op, init.schemas);
    this.cacheNode = cached ? op("cache") : null;
    this.sink = new NodeMetrics("sink", this.name);
    this.keepSource = alter && c.cache.resendIndicatorField !== "";
    this.resend = alter
      ? new ResendSink({
          ruleId: init.ruleId,
          name: this.name,
          cacheName: `${this.name}_cache`,
          conf: c.cache,
          connector: init.resendConnector!,
          dataDir: init.dataDir,
          mark: this.keepSource ? (item) => (item.source ? this.payloads.mark(item, item.source, c.cache.resendIndicatorField) : item) : null,
          mainBusy: () => this.sending || this.queue.length > 0,
          log: init.log,
        })
      : null;
    // Topology order: … → sink → op_<type>_<i>_cache → sink_<type>_<i>_resend (rest-api.md §6.3).
    const pl = this.payloads;
    const nodes = [this.batchNode, this.transformNode, pl.writerNode, pl.encodeNode, pl.compressNode, pl.encryptNode, this.cacheNode, this.sink];
    if (this.resend) nodes.push(this.resend.cacheNode, this.resend.sink);
    this.metrics = nodes.filter((m): m is NodeMetrics => m !== null);
    this.status.attach(this.sink);
    // A bytes sink with json format sends template text verbatim.
    // Without batching, a whole window's template is rendered in steps too (`pendingTemplate`).
    this.transformer = new Transformer(c, bytes && c.format === "json", init.props, this.payloads.sliceableBatch && !batching ? SLICE : Infinity);
    this.backlog = new Backlog(
      {
        encode: (o, now, tp) => this.encodeGuarded(o, now, tp),
        encodeRow: (row, now, tp) => {
          const o = this.transformer.single(row);
          if (o === null) return;
          this.transformNode.recordsOut++;
          this.transformNode.messagesProcessed++;
          this.encodeGuarded(o, now, tp);
        },
        renderRow: (row, outs) => this.transformer.rowOutputs(row, outs),
        rendered: (outs) => {
          const t = this.transformNode;
          t.recordsOut += outs.length;
          for (const o of outs) t.messagesProcessed += o.rows;
        },
        enqueueOutput: (o, payload, now, tp) => this.enqueueOutput(o, payload, now, false, tp),
        enqueueBatch: (list, payload, now) => this.enqueueBatch(list, payload, now),
        drained: () => this.checkRoom(),
      },
      this.payloads,
      this.transformer,
      this.transformNode,
    );
    const onDrop = (n: number) => {
      this.lost += n;
      const node = this.cacheNode ?? this.sink;
      node.exception(`buffer full, drop ${n} message(s) from ${this.name}`, Date.now());
    };
    this.queue = cached
      ? new CachedQueue(c.cache, new SinkCacheStore(cacheDb(init.dataDir), `sink/${init.ruleId}/${this.name}`), onDrop)
      : new MemoryQueue(c.bufferLength, onDrop);
    // With the alter queue the main sink never retries: failures go to the resend instance.
    const retry = alter ? 0 : c.cache.resendInterval > 0 ? c.cache.resendInterval : c.cache.enableCache ? 100 : 0;
    this.retryMs = retry;
    this.direct = init.connector.direct === true && !c.cache.enableCache && this.resend === null;
    this.keys = init.connector.keyed ? new EmissionKeys(this.name) : null;
  }

  private nextKey(): string {
    return this.keys === null ? "" : this.keys.next();
  }

  /**
   * The item keys of a keyed connector, for the rule's checkpoint; undefined for the others. What
   * was pushed before it is counted: the backlog is made into items now, and outputs waiting for
   * their batch keep one key (their batch takes it; a restored run does not make it again).
   */
  snapshot(): { epoch: string; made: number } | undefined {
    if (this.keys === null) return undefined;
    this.backlog.drain();
    return this.keys.snapshot(this.pending.length > 0 ? 1 : 0);
  }

  restore(s: unknown): void {
    this.keys?.restore(s);
  }

  /** The connector reads item keys. */
  get keyed(): boolean {
    return this.keys !== null;
  }

  /** A stateful run with checkpoints that starts without one (EmissionKeys.startFrom). */
  keysFrom(fingerprint: string): void {
    this.keys?.startFrom(fingerprint);
  }

  /** A run whose sources do not replay what followed its checkpoint (EmissionKeys.fresh). */
  keysFresh(): void {
    this.keys?.fresh();
  }

  /** Connects the connector and starts the worker (which waits for the first connection). */
  open(): void {
    const ready = Promise.resolve(
      this.conn.open({ ruleId: this.init.ruleId, name: this.name, status: this.status, metrics: this.sink, log: this.init.log }),
    );
    if (this.c.lingerInterval > 0) this.linger = setInterval(() => this.flushBatch(), this.c.lingerInterval);
    this.worker = this.work(ready);
    this.resend?.open();
    // Items restored from a previous run's cache are sent first.
    if (this.queue.length > 0) this.wake();
  }

  /** How many more results the rule may push before it should wait (Infinity with the cache). */
  room(): number {
    return this.queue.room() - this.backlog.length;
  }

  /** Calls `fn` once when the queue has room again. */
  onRoom(fn: () => void): void {
    this.roomWaiters.push(fn);
    this.checkRoom();
  }

  private checkRoom(): void {
    if (this.roomWaiters.length === 0 || this.room() <= 0) return;
    const w = this.roomWaiters;
    this.roomWaiters = [];
    for (const f of w) f();
  }

  /** The sink's error boundary: whatever an item makes the chain throw fails that item only, counted. */
  push(item: Item): void {
    if (this.init.fence && !this.init.fence()) {
      this.sink.exception(FENCED, Date.now());
      return;
    }
    try {
      this.pushItem(item);
    } catch (e) {
      this.transformNode.exception(failureText(e), Date.now());
    }
  }

  private pushItem(item: Item): void {
    const now = this.clock();
    // Helper latencies are sampled like the operators' (operator.ts): the first result, then one in 64.
    const timed = (++this.pushes & 63) === 1;
    const b = this.batchNode;
    if (b) {
      b.recordsIn++;
      b.recordsOut++;
      b.lastInvocation = now;
    }
    const t = this.transformNode;
    t.recordsIn++;
    t.lastInvocation = now;
    // A big result sent singly: its rows become outputs in the backlog's slices.
    if (b === null && item instanceof Emission && item.row === null && this.c.sendSingle && item.rows.length > SLICE) {
      this.backlog.offerRows(item.rows, this.traceparent, !this.transformer.plainSingle);
      return;
    }
    const outs = this.outs;
    outs.length = 0;
    const t0 = timed ? performance.now() : 0;
    try {
      this.transformer.apply(item, outs);
    } catch (e) {
      if (!(e instanceof RowError)) throw e;
      t.exception(e.message, now);
      return;
    }
    if (timed) t.processLatencyUs = elapsedUs(t0);
    t.recordsOut += outs.length;
    for (const o of outs) t.messagesProcessed += o.rows;
    if (b) {
      const t1 = timed ? performance.now() : 0;
      for (const o of outs) this.pending.push(o);
      if (timed) b.processLatencyUs = elapsedUs(t1);
      if (this.c.batchSize > 0 && ++this.batchCount >= this.c.batchSize) this.flushBatch();
      return;
    }
    // Behind a backlog, too many for one go or a whole array: the backlog takes them in order.
    const tp = this.traceparent;
    if (this.backlog.offer(outs, tp)) return;
    for (const o of outs) this.encodeOne(o, now, timed, tp);
  }

  /** `encodeOne` outside `push`'s error boundary: the same boundary, per output. */
  private encodeGuarded(o: Output, now: number, tp: string | null): void {
    try {
      this.encodeOne(o, now, false, tp);
    } catch (e) {
      this.transformNode.exception(failureText(e), now);
    }
  }

  private encodeOne(o: Output, now: number, timed: boolean, tp: string | null): void {
    let payload: Payload | undefined;
    if (this.conn.bytes) {
      payload = this.payloads.single(o, now, timed);
      if (payload === undefined) return;
    } else {
      try {
        payload = tupleData(o);
      } catch (x) {
        if (!(x instanceof RowError)) throw x;
        this.transformNode.exception(x.message, now);
        return;
      }
    }
    this.enqueueOutput(o, payload, now, timed, tp);
  }

  private enqueueOutput(o: Output, payload: Payload, now: number, timed: boolean, tp: string | null): void {
    // The worker waits on an empty queue: a direct connector sends now, in order.
    if (this.direct && this.wakeFn !== undefined) {
      const it = this.scratch;
      it.payload = payload;
      it.props = o.props;
      it.rows = o.rows;
      it.traceparent = tp;
      this.sendNow(it, now);
      return;
    }
    this.enqueue(new SinkItem(payload, o.props, o.rows, this.keepSource ? new SinkSource([[o.data, o.text]], false) : null, tp, this.nextKey()), now, timed);
  }

  /** The batch writer: pending outputs become one payload (rules-and-sinks.md §3.1 step 3). */
  private flushBatch(): void {
    this.batchCount = 0;
    const list = this.pending;
    if (list.length === 0) return;
    this.pending = [];
    const now = Date.now();
    const w = this.payloads.writerNode!;
    w.recordsIn++;
    w.lastInvocation = now;
    // Behind a batch being built, or big: built across slices like a whole array.
    if (this.backlog.offerBatch(list)) return;
    let payload: Payload;
    // Batches are few: every flush is timed.
    const t0 = performance.now();
    try {
      payload = this.payloads.batch(list, now);
    } catch (e) {
      if (!(e instanceof RowError)) throw e;
      w.exception(e.message, now);
      return;
    }
    w.recordsOut++;
    w.processLatencyUs = elapsedUs(t0);
    this.enqueueBatch(list, payload, now);
  }

  private enqueueBatch(list: readonly Output[], payload: Payload, now: number): void {
    let rows = 0;
    for (const o of list) rows += o.rows;
    const src = this.keepSource ? new SinkSource(list.map((o) => [o.data, o.text]), true) : null;
    this.enqueue(new SinkItem(payload, list[0]!.props, rows, src, null, this.nextKey()), now, true);
  }

  private enqueue(item: SinkItem, now: number, timed: boolean): void {
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
   * A direct connector's send, in the pipeline's turn (the worker is idle, the queue empty). Timed
   * like the worker's synchronous sends. A failure is counted and handled as the worker handles one
   * (a direct sink has neither cache nor resend queue): an I/O error with a retry interval leaves a
   * copy queued for the worker to send after the interval, anything else drops the result (lost).
   */
  private sendNow(item: SinkItem, now: number): void {
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
        this.queue.push(new SinkItem(item.payload, item.props, item.rows, null, item.traceparent, item.key));
        m.bufferLength = this.queue.memLength;
        this.wake();
        return;
      }
      this.dropFailed(e);
      return;
    }
    m.recordsOut++;
    m.messagesProcessed += item.rows;
    m.lastInvocation = now;
    if (timed) m.processLatencyUs = elapsedUs(t0);
  }

  /** A failed send that is not retried: the result is lost (an unexpected error is also logged). */
  private dropFailed(e: unknown): void {
    if (!(e instanceof IoError)) this.init.log(`sink ${this.name} of rule ${this.init.ruleId} drops a message: ${errorText(e)}`);
    this.lost++;
  }

  private wake(): void {
    const f = this.wakeFn;
    if (f) {
      this.wakeFn = undefined;
      f();
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      this.sleepDone = r;
      this.sleepTimer = setTimeout(r, ms);
    });
  }

  private async work(ready: Promise<void>): Promise<void> {
    try {
      await ready;
    } catch (e) {
      this.sink.exception(errorText(e), Date.now());
      return;
    }
    const q = this.queue;
    const m = this.sink;
    const resend = this.resend;
    const resendFirst = resend !== null && this.c.cache.resendPriority > 0;
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
        await new Promise<void>((r) => (this.wakeFn = r));
        // Woken with a direct send's failure queued: it is retried after the interval, as below.
        if (this.failing && !this.aborted) await this.sleep(this.retryMs);
        continue;
      }
      // resendPriority 1: while older items wait for a resend, fresh ones queue behind them.
      if (resendFirst && resend.length > 0) {
        resend.take(item, Date.now());
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
          resend.take(item, now);
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

  /**
   * Makes what was queued durable now (the cache's write-through, cached-queue.ts); the rule's
   * inlet calls it at the end of each drain, before the sources acknowledge what they delivered.
   */
  flush(): void {
    // What the sources acknowledge next must be in the cache, not waiting in the backlog.
    if (this.queue instanceof CachedQueue && this.backlog.length > 0) this.backlog.drain();
    this.queue.flush();
  }

  /** End of input: the backlog and the partial batch are flushed; the worker finishes what is queued. */
  end(): void {
    // The partial batch queues behind the backlog, which is then encoded in one go.
    this.flushBatch();
    this.backlog.drain();
    this.ending = true;
    this.wake();
  }

  /** Items waiting to be sent (all tiers). */
  get queued(): number {
    return this.queue.length + this.backlog.length + (this.resend?.length ?? 0);
  }

  /** Items dropped by the cache's disk budget or the queue's headroom. */
  get dropped(): number {
    return this.queue.dropped + (this.resend?.dropped ?? 0);
  }

  /**
   * Stops after the queue drains or `graceMs` passes, whichever is first; what is left is saved
   * for the next run (cache, unless cleanCacheAtStop) or counted as lost.
   */
  async close(graceMs: number): Promise<void> {
    if (this.linger) clearInterval(this.linger);
    this.linger = undefined;
    if (!this.ending) this.end();
    // A sink that is down gets no grace: its items go to the cache (or are counted lost) at once.
    if (this.worker && !this.failing) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.worker, new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    }
    this.aborted = true;
    this.backlog.stop();
    if (this.sleepTimer) clearTimeout(this.sleepTimer);
    this.sleepDone?.();
    this.wake();
    const resend = this.resend;
    if (this.queue instanceof CachedQueue) this.queue.stop(this.c.cache.cleanCacheAtStop);
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
      await resend.close(this.c.cache.cleanCacheAtStop);
      this.lost += resend.lost;
    }
    try {
      await this.conn.close();
    } catch (e) {
      this.init.log(`sink ${this.name} of rule ${this.init.ruleId} fails to close: ${errorText(e)}`);
    }
    this.status.detach(this.sink);
  }
}
