/**
 * One action of a rule: the sink helper nodes (rest-api.md §6.3: batch, transform, batchWriter,
 * encode, compress, encrypt, cache), the sink's bounded queue and the worker that drains it into
 * the connector. `push` runs synchronously in the rule's chain and never blocks: the rule asks
 * `room()` before feeding more records and `onRoom` tells it when to resume, so a slow sink pushes
 * back on the rule and, through the bus, on the source.
 */
import { errorText, IoError, RowError } from "../../errors.ts";
import { bytesOf, compressor, encryptor, type Transform } from "./codec.ts";
import { isObj, type Obj, type Value } from "../../expr/values.ts";
import type { Item } from "../../runtime/item.ts";
import { NodeMetrics } from "../../runtime/metrics.ts";
import type { SinkNode } from "../../runtime/topology.ts";
import { cacheDb, SinkCacheStore } from "../../store/sink-cache.ts";
import { createEncoder, type Encoder } from "../formats/encode.ts";
import { encodeGoJson } from "../formats/json-encode.ts";
import { parseGoJson } from "../../functions/go-json.ts";
import type { SinkCommon } from "./common.ts";
import { ConnectionReporter, SinkItem, type SinkConnector } from "./connector.ts";
import { CachedQueue, MemoryQueue, type SinkQueue } from "./queue.ts";
import { Output, Transformer } from "./transform.ts";

export interface SinkPipelineInit {
  readonly ruleId: string;
  readonly type: string;
  readonly index: number;
  /** The action's property object (templated values are rendered per item). */
  readonly props: Record<string, unknown>;
  readonly common: SinkCommon;
  readonly connector: SinkConnector;
  /** Where the cache keeps its disk pages (`<data>/cache.db`). */
  readonly dataDir: string;
  /** base64 AES key (`basic.aesKey`) for `encryption: aes`. */
  readonly aesKey?: string;
  log(line: string): void;
}

/** Tuple sinks take rows: a template's text is decoded back (object → row, array → rows). */
function tupleData(o: Output): Obj | Obj[] {
  let d: Value = o.data;
  if (o.text !== null) d = parseGoJson(o.text);
  if (isObj(d)) return d;
  if (Array.isArray(d)) return d.filter(isObj);
  throw new RowError(`unsupported type ${String(d)}, must be a map or a list of maps`);
}

export class SinkPipeline implements SinkNode {
  readonly metrics: NodeMetrics[];
  readonly name: string;
  readonly status = new ConnectionReporter();
  private readonly sink: NodeMetrics;
  private readonly batchNode: NodeMetrics | null;
  private readonly transformNode: NodeMetrics;
  private readonly writerNode: NodeMetrics | null;
  private readonly encodeNode: NodeMetrics | null;
  private readonly compressNode: NodeMetrics | null;
  private readonly encryptNode: NodeMetrics | null;
  private readonly cacheNode: NodeMetrics | null;
  private readonly transformer: Transformer;
  private readonly encoder: Encoder | null;
  private readonly compress: Transform | null;
  private readonly encrypt: Transform | null;
  private readonly queue: SinkQueue;
  private readonly conn: SinkConnector;
  private readonly c: SinkCommon;
  private readonly retryMs: number;
  private readonly outs: Output[] = [];
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

  constructor(private readonly init: SinkPipelineInit) {
    const { type, index, common: c } = init;
    this.c = c;
    this.conn = init.connector;
    this.name = `${type}_${index}`;
    const bytes = init.connector.bytes;
    const batching = c.batchSize > 0 || c.lingerInterval > 0;
    const cached = c.cache.enableCache && !c.cache.resendAlterQueue;
    let k = 0;
    const op = (helper: string) => new NodeMetrics("op", `${type}_${index}_${k++}_${helper}`);
    this.batchNode = batching ? op("batch") : null;
    this.transformNode = op("transform");
    this.writerNode = batching ? op("batchWriter") : null;
    this.encodeNode = bytes && !batching ? op("encode") : null;
    this.compress = bytes && type !== "file" ? compressor(c.compression) : null;
    this.compressNode = this.compress ? op("compress") : null;
    this.encrypt = bytes && type !== "file" ? encryptor(c.encryption, init.aesKey, c.encProps) : null;
    this.encryptNode = this.encrypt ? op("encrypt") : null;
    this.cacheNode = cached ? op("cache") : null;
    this.sink = new NodeMetrics("sink", this.name);
    this.metrics = [this.batchNode, this.transformNode, this.writerNode, this.encodeNode, this.compressNode, this.encryptNode, this.cacheNode, this.sink].filter(
      (m): m is NodeMetrics => m !== null,
    );
    this.status.attach(this.sink);
    // A bytes sink with json format sends template text verbatim.
    this.transformer = new Transformer(c, bytes && c.format === "json", init.props);
    this.encoder = bytes ? createEncoder(c.format, c) : null;
    const onDrop = (n: number) => {
      this.lost += n;
      const node = this.cacheNode ?? this.sink;
      node.exception(`buffer full, drop ${n} message(s) from ${this.name}`, Date.now());
    };
    this.queue = cached
      ? new CachedQueue(c.cache, new SinkCacheStore(cacheDb(init.dataDir), `sink/${init.ruleId}/${this.name}`), onDrop)
      : new MemoryQueue(c.bufferLength, onDrop);
    const retry = c.cache.resendInterval > 0 ? c.cache.resendInterval : c.cache.enableCache ? 100 : 0;
    this.retryMs = retry;
  }

  /** Connects the connector and starts the worker (which waits for the first connection). */
  open(): void {
    const ready = Promise.resolve(
      this.conn.open({ ruleId: this.init.ruleId, name: this.name, status: this.status, log: this.init.log }),
    );
    if (this.c.lingerInterval > 0) this.linger = setInterval(() => this.flushBatch(), this.c.lingerInterval);
    this.worker = this.work(ready);
    // Items restored from a previous run's cache are sent first.
    if (this.queue.length > 0) this.wake();
  }

  /** How many more results the rule may push before it should wait (Infinity with the cache). */
  room(): number {
    return this.queue.room();
  }

  /** Calls `fn` once when the queue has room again. */
  onRoom(fn: () => void): void {
    this.roomWaiters.push(fn);
    this.checkRoom();
  }

  private checkRoom(): void {
    if (this.roomWaiters.length === 0 || this.queue.room() <= 0) return;
    const w = this.roomWaiters;
    this.roomWaiters = [];
    for (const f of w) f();
  }

  push(item: Item): void {
    const now = Date.now();
    if (this.batchNode) {
      this.batchNode.recordsIn++;
      this.batchNode.recordsOut++;
      this.batchNode.lastInvocation = now;
    }
    const t = this.transformNode;
    t.recordsIn++;
    t.lastInvocation = now;
    const outs = this.outs;
    outs.length = 0;
    try {
      this.transformer.apply(item, outs);
    } catch (e) {
      if (!(e instanceof RowError)) throw e;
      t.exception(e.message, now);
      return;
    }
    t.recordsOut += outs.length;
    for (const o of outs) t.messagesProcessed += o.rows;
    if (this.batchNode) {
      for (const o of outs) this.pending.push(o);
      if (this.c.batchSize > 0 && ++this.batchCount >= this.c.batchSize) this.flushBatch();
      return;
    }
    for (const o of outs) this.encodeOne(o, now);
  }

  private encodeOne(o: Output, now: number): void {
    let payload: SinkItem["payload"];
    const e = this.encodeNode;
    if (e) {
      e.recordsIn++;
      e.lastInvocation = now;
      try {
        payload = o.text ?? this.encoder!(o.data);
      } catch (x) {
        if (!(x instanceof RowError)) throw x;
        e.exception(x.message, now);
        return;
      }
      e.recordsOut++;
      payload = this.postEncode(payload, now);
    } else {
      try {
        payload = tupleData(o);
      } catch (x) {
        if (!(x instanceof RowError)) throw x;
        this.transformNode.exception(x.message, now);
        return;
      }
    }
    this.enqueue(new SinkItem(payload, o.props, o.rows), now);
  }

  private postEncode(p: string | Uint8Array, now: number): string | Uint8Array {
    if (this.compress) {
      this.compressNode!.recordsIn++;
      p = this.compress(bytesOf(p));
      this.compressNode!.recordsOut++;
      this.compressNode!.lastInvocation = now;
    }
    if (this.encrypt) {
      this.encryptNode!.recordsIn++;
      p = this.encrypt(bytesOf(p));
      this.encryptNode!.recordsOut++;
      this.encryptNode!.lastInvocation = now;
    }
    return p;
  }

  /** The batch writer: pending outputs become one payload (rules-and-sinks.md §3.1 step 3). */
  private flushBatch(): void {
    this.batchCount = 0;
    const list = this.pending;
    if (list.length === 0) return;
    this.pending = [];
    const now = Date.now();
    const w = this.writerNode!;
    w.recordsIn++;
    w.lastInvocation = now;
    let rows = 0;
    for (const o of list) rows += o.rows;
    let payload: SinkItem["payload"];
    try {
      if (!this.conn.bytes) {
        const merged: Obj[] = [];
        for (const o of list) {
          const d = tupleData(o);
          if (Array.isArray(d)) for (const r of d) merged.push(r);
          else merged.push(d);
        }
        payload = merged;
      } else if (this.c.format === "json") {
        let s = "[";
        for (let i = 0; i < list.length; i++) s += (i ? "," : "") + (list[i]!.text ?? encodeGoJson(list[i]!.data));
        payload = this.postEncode(s + "]", now);
      } else {
        const parts = list.map((o) => {
          const p = o.text ?? this.encoder!(o.data);
          return typeof p === "string" ? p : new TextDecoder().decode(p);
        });
        payload = this.postEncode(parts.join("\n"), now);
      }
    } catch (e) {
      if (!(e instanceof RowError)) throw e;
      w.exception(e.message, now);
      return;
    }
    w.recordsOut++;
    this.enqueue(new SinkItem(payload, list[0]!.props, rows), now);
  }

  private enqueue(item: SinkItem, now: number): void {
    const c = this.cacheNode;
    if (c) {
      c.recordsIn++;
      c.recordsOut++;
      c.lastInvocation = now;
    }
    this.sink.recordsIn++;
    this.queue.push(item);
    this.sink.bufferLength = this.queue.memLength;
    if (c) c.bufferLength = this.queue.length - this.queue.memLength;
    this.wake();
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
    for (;;) {
      if (this.aborted) return;
      const item = q.peek();
      if (item === undefined) {
        if (this.ending) return;
        await new Promise<void>((r) => (this.wakeFn = r));
        continue;
      }
      const t0 = performance.now();
      try {
        const r = this.conn.send(item);
        if (r) await r;
      } catch (e) {
        if (this.aborted) return;
        const now = Date.now();
        m.exception(errorText(e), now);
        if (e instanceof IoError && this.retryMs > 0) {
          this.failing = true;
          await this.sleep(this.retryMs);
          continue;
        }
        if (!(e instanceof IoError)) this.init.log(`sink ${this.name} of rule ${this.init.ruleId} drops a message: ${errorText(e)}`);
        this.lost++;
        q.shift();
        this.afterShift();
        continue;
      }
      this.failing = false;
      m.recordsOut++;
      m.messagesProcessed += item.rows;
      m.lastInvocation = Date.now();
      m.processLatencyUs = Math.round((performance.now() - t0) * 1000);
      q.shift();
      this.afterShift();
    }
  }

  private afterShift(): void {
    this.sink.bufferLength = this.queue.memLength;
    if (this.cacheNode) this.cacheNode.bufferLength = this.queue.length - this.queue.memLength;
    if (this.roomWaiters.length) this.checkRoom();
  }

  /** End of input: the partial batch is flushed; the worker finishes what is queued. */
  end(): void {
    this.flushBatch();
    this.ending = true;
    this.wake();
  }

  /** Items waiting to be sent (all tiers). */
  get queued(): number {
    return this.queue.length;
  }

  /** Items dropped by the cache's disk budget or the queue's headroom. */
  get dropped(): number {
    return this.queue.dropped;
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
    if (this.sleepTimer) clearTimeout(this.sleepTimer);
    this.sleepDone?.();
    this.wake();
    if (this.queue instanceof CachedQueue) this.queue.stop(this.c.cache.cleanCacheAtStop);
    else {
      this.lost += this.queue.length;
      this.queue.stop(true);
    }
    this.sink.bufferLength = 0;
    try {
      await this.conn.close();
    } catch (e) {
      this.init.log(`sink ${this.name} of rule ${this.init.ruleId} fails to close: ${errorText(e)}`);
    }
    this.status.detach(this.sink);
  }
}
