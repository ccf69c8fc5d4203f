/**
 * One action of a rule: the sink helper nodes (rest-api.md §6.3: batch, transform, batchWriter,
 * encode, compress, encrypt, cache) that make a result into sink items, and the sender
 * (sender.ts: the bounded queue, the worker that drains it into the connector, resend). `push`
 * runs synchronously in the rule's chain and never blocks: the rule asks `room()` before feeding
 * more records and `onRoom` tells it when to resume, so a slow sink pushes back on the rule and,
 * through the bus, on the source. With `resendAlterQueue` the failed items go to a resend
 * instance of the connector behind its own cache (resend.ts).
 *
 * A result too big to encode in one turn of the event loop waits in the backlog (backlog.ts),
 * which counts against `room()` and encodes it in slices, in order, ahead of later results.
 */
import { EmissionKeys } from "./emission-keys.ts";
import { failureText, RowError } from "../errors.ts";
import { Emission, type Item } from "../core/item.ts";
import { NodeMetrics } from "../core/metrics.ts";
import type { SinkNode } from "../core/sink.ts";
import type { SchemaRegistry } from "../formats/schema-registry.ts";
import type { Obj } from "../value/values.ts";
import { SinkItem, SinkSource } from "./connector.ts";
import { ConnectionReporter } from "../core/connection.ts";
import { elapsedUs, PayloadEncoder, tupleData, type Payload } from "./payload.ts";
import { Backlog, type BacklogHost } from "./backlog.ts";
import { SLICE_OUTPUTS as SLICE } from "../core/turn.ts";
import { SinkSender, type SenderConf } from "./sender.ts";
import { Transformer, type Output } from "./transform.ts";
import { encodedItem, encodingKey, encodingStats, release, type Encoded, type EncodedItem } from "./shared-encoding.ts";

export interface SinkPipelineInit extends SenderConf {
  readonly type: string;
  readonly index: number;
  /** A graph rule's sink node name (graph-rules.md §5): names the sink `sink_<node>` and its helpers `<node>_<k>_…`. */
  readonly node?: string;
  /** The action's property object (templated values are rendered per item). */
  readonly props: Record<string, unknown>;
  /** base64 AES key (`basic.aesKey`) for `encryption: aes`. */
  readonly aesKey?: string;
  /** The registered schemas `format: "protobuf"` encodes with (`schemaId`). */
  readonly schemas?: SchemaRegistry;
  /** False while the run may not act as its input's owner (a group partition whose lease lapsed): results are not sent, and counted as exceptions. */
  readonly fence?: () => boolean;
}

/** The wall clock, until the rule sets its own (`clock`). */
const WALL = { now: Date.now };

const FENCED = "not sent: this member may no longer own the partition (its lease lapsed or a newer owner claimed it); the owner recomputes it from the group's checkpoint";

export class SinkPipeline implements SinkNode, BacklogHost {
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
  /** Outputs are kept on each item so a resend can re-encode them (`resendIndicatorField`). */
  private readonly keepSource: boolean;
  private readonly transformer: Transformer;
  /** Results pushed so far; one in 64 has its helper nodes timed (process_latency_us). */
  private pushes = 0;
  private readonly c: SinkPipelineInit["common"];
  private readonly outs: Output[] = [];
  /** Results waiting to be encoded across turns of the event loop; see the header. */
  private readonly backlog: Backlog;
  /** The queue, its worker and the resend instance (sender.ts). */
  private readonly sender: SinkSender;
  private pending: Output[] = [];
  /** The tag of the first result in `pending` (SinkItem.tag: the batch's). */
  private pendingFrom = 0;
  private batchCount = 0;
  /** Results pushed so far: the last one's number, its items' tag (SinkItem.tag). */
  private count = 0;
  private linger: ReturnType<typeof setInterval> | undefined;
  /** A keyed connector's item keys (SinkItem.key), checkpointed (`snapshot`); null for the others. */
  private readonly keys: EmissionKeys | null;
  /** The outputs and payloads of the last item, shared with the sinks configured alike (shared-encoding.ts); null: this sink's own. */
  private shared: EncodedItem | null;
  /** The payloads of the item being encoded, for `shared`. */
  private made: Encoded[] = [];
  /** The connector takes bytes (else rows); SinkPipelineInit.fence. */
  private readonly bytes: boolean;
  private readonly fence: (() => boolean) | undefined;
  /** The encode node when a payload is its encoding as it is (no compression, no encryption), else null. */
  private readonly plainEncode: NodeMetrics | null;
  /**
   * The time of a pushed result (ms): a rule sets its own clock, which reads the time once per
   * batch it drains, so results pushed in a batch cost no clock read each.
   */
  clock: { now(): number } = WALL;

  constructor(init: SinkPipelineInit) {
    const { type, index, common: c } = init;
    this.c = c;
    this.name = init.node ?? `${type}_${index}`;
    const base = this.name;
    const bytes = init.connector.bytes;
    this.bytes = bytes;
    this.fence = init.fence;
    const batching = c.batchSize > 0 || c.lingerInterval > 0;
    const alter = c.cache.enableCache && c.cache.resendAlterQueue && !!init.resendConnector;
    const cached = c.cache.enableCache && !c.cache.resendAlterQueue;
    let k = 0;
    const op = (helper: string) => new NodeMetrics("op", `${base}_${k++}_${helper}`);
    this.batchNode = batching ? op("batch") : null;
    this.transformNode = op("transform");
    this.payloads = new PayloadEncoder(c, bytes, type, batching, init.aesKey, op, init.schemas);
    this.cacheNode = cached ? op("cache") : null;
    const pl = this.payloads;
    this.plainEncode = pl.compressNode === null && pl.encryptNode === null ? pl.encodeNode : null;
    this.sink = new NodeMetrics("sink", this.name);
    this.keepSource = alter && c.cache.resendIndicatorField !== "";
    this.status.attach(this.sink);
    // A bytes sink with json format sends template text verbatim.
    // Without batching, a whole window's template is rendered in steps too (`pendingTemplate`).
    this.transformer = new Transformer(c, bytes && c.format === "json", init.props, this.payloads.sliceableBatch && !batching ? SLICE : Infinity);
    // The pipeline is its backlog's host (the BacklogHost methods below).
    this.backlog = new Backlog(this, this.payloads, this.transformer, this.transformNode);
    const mark = this.keepSource ? (item: SinkItem) => (item.source ? this.payloads.mark(item, item.source, c.cache.resendIndicatorField) : item) : null;
    this.sender = new SinkSender(init, this.name, this.sink, this.cacheNode, this.status, mark, this.backlog);
    // Topology order: … → sink → op_<type>_<i>_cache → sink_<type>_<i>_resend (rest-api.md §6.3).
    const nodes = [this.batchNode, this.transformNode, pl.writerNode, pl.encodeNode, pl.compressNode, pl.encryptNode, this.cacheNode, this.sink];
    const resend = this.sender.resend;
    if (resend) nodes.push(resend.cacheNode, resend.sink);
    this.metrics = nodes.filter((m): m is NodeMetrics => m !== null);
    this.keys = init.connector.keyed ? new EmissionKeys(this.name) : null;
    const key = encodingKey(c, bytes, type === "file", this.transformer.templatedProps ? init.props : null);
    this.shared = key === undefined ? null : encodedItem(key);
  }

  private nextKey(tag: number): string {
    return this.keys === null ? "" : this.keys.next(tag);
  }

  /**
   * The item keys of a keyed connector, for the rule's checkpoint; undefined for the others. It
   * counts the keys of every result pushed before it, those still in the backlog or waiting for
   * their batch as they are made (EmissionKeys.snapshot): read once its barrier passed.
   */
  snapshot(): { epoch: string; made: number } | undefined {
    return this.keys?.snapshot(this.count);
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
    const ready = this.sender.connect();
    if (this.c.lingerInterval > 0) this.linger = setInterval(() => this.flushBatch(), this.c.lingerInterval);
    this.sender.start(ready);
  }

  /** How many more results the rule may push before it should wait (Infinity with the cache). */
  room(): number {
    return this.sender.room();
  }

  /** Calls `fn` once when the queue has room again. */
  onRoom(fn: () => void): void {
    this.sender.onRoom(fn);
  }

  /** Items dropped by the sink: failed sends without retry, evictions, unsent at stop. */
  get lost(): number {
    return this.sender.lost;
  }

  /** The sink's error boundary: whatever an item makes the chain throw fails that item only, counted. */
  push(item: Item): void {
    const tag = ++this.count;
    const fence = this.fence;
    if (fence !== undefined && !fence()) {
      this.sink.exception(FENCED, Date.now());
      return;
    }
    try {
      this.pushItem(item, tag);
    } catch (e) {
      this.transformNode.exception(failureText(e), Date.now());
      this.lastMade = undefined;
    }
  }

  private pushItem(item: Item, tag: number): void {
    const now = this.clock.now();
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
    const sh = this.shared;
    // The item a sink alike has made its outputs and payloads of (shared-encoding.ts): taken as they are.
    if (sh !== null && sh.item === item && b === null && this.backlog.length === 0) {
      this.reuse(sh, now, tag);
      return;
    }
    // A big result sent singly: its rows become outputs in the backlog's slices.
    if (b === null && item instanceof Emission && item.row === null && this.c.sendSingle && item.rows.length > SLICE) {
      this.backlog.offerRows(item.rows, this.traceparent, !this.transformer.plainSingle, tag);
      return;
    }
    const outs = this.outs;
    outs.length = 0;
    const t0 = timed ? performance.now() : 0;
    // Nothing keeps this push's outputs (no batch, no backlog, no sinks alike, no resend source).
    const reuse = b === null && sh === null && !this.keepSource && this.backlog.length === 0;
    try {
      this.transformer.apply(item, outs, reuse);
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
      if (this.pending.length === 0) this.pendingFrom = tag;
      for (const o of outs) this.pending.push(o);
      if (timed) b.processLatencyUs = elapsedUs(t1);
      if (this.c.batchSize > 0 && ++this.batchCount >= this.c.batchSize) this.flushBatch();
      return;
    }
    // Behind a backlog, too many for one go or a whole array: the backlog takes them in order.
    const tp = this.traceparent;
    if (this.backlog.offer(outs, tp, tag)) return;
    if (sh === null || b !== null) {
      try {
        for (const o of outs) this.encodeOne(o, now, timed, tp, tag);
      } finally {
        if (reuse) this.transformer.released();
      }
      return;
    }
    // Every output made without a failure: the sinks alike take them (`reuse`).
    const made = this.made;
    made.length = 0;
    for (const o of outs) if (this.encodeOne(o, now, timed, tp, tag)) made.push(this.lastMade!);
    this.lastMade = undefined;
    if (made.length === outs.length) {
      sh.hold(item, outs, made);
      encodingStats.held++;
    } else sh.clear();
    made.length = 0;
  }

  /** What `encodeOne` encoded last, before compression and encryption. */
  private lastMade: Encoded | undefined;

  /** Sends the outputs and payloads a sink alike made of the item, counted as if this sink had made them. */
  private reuse(sh: EncodedItem, now: number, tag: number): void {
    encodingStats.reused++;
    const t = this.transformNode;
    const outs = sh.outs;
    t.recordsOut += outs.length;
    for (let i = 0; i < outs.length; i++) t.messagesProcessed += outs[i]!.rows;
    const bytes = this.bytes;
    const tp = this.traceparent;
    // Without compression or encryption the encode node is counted here, the encoding sent as it is.
    const en = this.plainEncode;
    for (let i = 0; i < outs.length; i++) {
      const e = sh.payloads[i]!;
      let payload: Payload;
      if (!bytes) payload = e as Payload;
      else if (en !== null) {
        en.recordsIn++;
        en.recordsOut++;
        en.lastInvocation = now;
        payload = e as string | Uint8Array;
      } else payload = this.payloads.encoded(e as string | Uint8Array, now);
      this.enqueueOutput(outs[i]!, payload, now, false, tp, tag);
    }
  }

  /** BacklogHost: `encodeOne` outside `push`'s error boundary, with the same boundary, per output. */
  encode(o: Output, now: number, tp: string | null, tag: number): void {
    try {
      this.encodeOne(o, now, false, tp, tag);
    } catch (e) {
      this.transformNode.exception(failureText(e), now);
    }
    this.lastMade = undefined;
  }

  /** BacklogHost: one row of a big result sent singly, transformed (counted) and encoded. */
  encodeRow(row: Obj, now: number, tp: string | null, tag: number): void {
    const o = this.transformer.single(row);
    if (o === null) return;
    this.transformNode.recordsOut++;
    this.transformNode.messagesProcessed++;
    this.encode(o, now, tp, tag);
  }

  /** BacklogHost: the outputs of one row of a big result sent singly. */
  renderRow(row: Obj, outs: Output[]): void {
    this.transformer.rowOutputs(row, outs);
  }

  /** BacklogHost: a big result's rows are rendered, counted out of the transform. */
  rendered(outs: readonly Output[]): void {
    const t = this.transformNode;
    t.recordsOut += outs.length;
    for (const o of outs) t.messagesProcessed += o.rows;
  }

  /** BacklogHost: the payload of a whole array built across slices. */
  enqueueSliced(o: Output, payload: Payload, now: number, tp: string | null, tag: number): void {
    this.enqueueOutput(o, payload, now, false, tp, tag);
  }

  /** BacklogHost: the backlog emptied in a slice. */
  drained(): void {
    this.sender.checkRoom();
  }

  /** Encodes and queues one output; false when its encoding failed (counted). */
  private encodeOne(o: Output, now: number, timed: boolean, tp: string | null, tag: number): boolean {
    let payload: Payload | undefined;
    if (this.bytes) {
      const pl = this.payloads;
      payload = pl.single(o, now, timed);
      if (payload === undefined) return false;
      // Kept only for the sinks alike (`shared`), and only until the item is held: nothing is pinned.
      if (this.shared !== null) this.lastMade = pl.lastEncoded;
      pl.lastEncoded = "";
    } else {
      try {
        payload = tupleData(o);
      } catch (x) {
        if (!(x instanceof RowError)) throw x;
        this.transformNode.exception(x.message, now);
        return false;
      }
      if (this.shared !== null) this.lastMade = payload;
    }
    this.enqueueOutput(o, payload, now, timed, tp, tag);
    return true;
  }

  private enqueueOutput(o: Output, payload: Payload, now: number, timed: boolean, tp: string | null, tag: number): void {
    // The worker waits on an empty queue: a direct connector sends now, in order.
    const sender = this.sender;
    if (sender.direct && sender.sendDirect(payload, o.props, o.rows, tp, now, tag)) return;
    sender.enqueue(new SinkItem(payload, o.props, o.rows, this.keepSource ? new SinkSource([[o.data, o.text]], false) : null, tp, this.nextKey(tag), tag), now, timed);
  }

  /** The batch writer: pending outputs become one payload (rules-and-sinks.md §3.1 step 3). */
  private flushBatch(): void {
    this.batchCount = 0;
    const list = this.pending;
    if (list.length === 0) return;
    this.pending = [];
    const tag = this.pendingFrom;
    const now = Date.now();
    const w = this.payloads.writerNode!;
    w.recordsIn++;
    w.lastInvocation = now;
    // Behind a batch being built, or big: built across slices like a whole array.
    if (this.backlog.offerBatch(list, tag)) return;
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
    this.enqueueBatch(list, payload, now, tag);
  }

  /** Queues a batch writer's payload (BacklogHost: also one built across slices). */
  enqueueBatch(list: readonly Output[], payload: Payload, now: number, tag: number): void {
    let rows = 0;
    for (const o of list) rows += o.rows;
    const src = this.keepSource ? new SinkSource(list.map((o) => [o.data, o.text]), true) : null;
    this.sender.enqueue(new SinkItem(payload, list[0]!.props, rows, src, null, this.nextKey(tag), tag), now, true);
  }

  /** Every item this sink has not sent is on disk (cache on, no alter queue). */
  get journaled(): boolean {
    return this.sender.journaled;
  }

  /**
   * Makes what was queued durable now (the cache's write-through, cached-queue.ts); the rule's
   * inlet calls it at the end of each drain, before the sources acknowledge what they delivered.
   * `acknowledged`: those acknowledgements say the results the drain made are on disk (a
   * stateless rule, runtime/acks.ts), so what waits in the backlog is encoded first. A rule with
   * state has its input durable only in its checkpoints, whose barrier waits for the backlog
   * (`safe`) in its slices: encoding it here, at every drain's end, held the event loop for all of
   * it while a window's big result was being sent.
   */
  flush(acknowledged: boolean): void {
    if (acknowledged && this.sender.journaled && this.backlog.length > 0) this.backlog.drain();
    this.sender.flush();
  }

  /** End of input: the backlog and the partial batch are flushed; the worker finishes what is queued. */
  end(): void {
    // The partial batch queues behind the backlog, which is then encoded in one go.
    this.flushBatch();
    this.backlog.drain();
    this.sender.end();
  }

  /** Results this sink was given so far (`push`), numbered 1, 2, … in order (SinkItem.tag). */
  get given(): number {
    return this.count;
  }

  /**
   * The checkpoint barrier's watermark (runtime/checkpoint.ts): the count of leading results, in
   * order of giving, whose items are all delivered — sent and confirmed where the connector
   * confirms (SinkConnector.confirmed), or dropped and counted — or, with `!delivered`, written
   * through to the sink's cache. Results still in a batch or the backlog hold it back, and so does
   * the oldest item not yet safe: items are made in order of their results (a batch merges results
   * and takes its first one's tag, a sendSingle split or a whole array sliced across turns gives
   * every item its result's tag), so every result before that item's is safe. A result that made no
   * item (filtered, failed, fenced) is safe once the ones before it are.
   */
  safe(delivered: boolean): number {
    let low = this.sender.lowestUnsafe(delivered);
    if (this.pending.length > 0 && this.pendingFrom < low) low = this.pendingFrom;
    const b = this.backlog.headTag;
    if (b < low) low = b;
    return low === Infinity ? this.count : low - 1;
  }

  /** Every result this sink was given is delivered and confirmed: none waits in a batch, the backlog, the queue or in flight. */
  get settled(): boolean {
    return this.safe(true) === this.count;
  }

  /** Items waiting to be sent (all tiers). */
  get queued(): number {
    return this.sender.queued + this.backlog.length;
  }

  /** Items dropped by the cache's disk budget or the queue's headroom. */
  get dropped(): number {
    return this.sender.dropped;
  }

  /**
   * Stops after the queue drains or `graceMs` passes, whichever is first; what is left is saved
   * for the next run (cache, unless cleanCacheAtStop) or counted as lost.
   */
  async close(graceMs: number): Promise<void> {
    if (this.shared !== null) release(this.shared);
    this.shared = null;
    if (this.linger) clearInterval(this.linger);
    this.linger = undefined;
    if (!this.sender.ended) this.end();
    await this.sender.close(graceMs);
  }
}
