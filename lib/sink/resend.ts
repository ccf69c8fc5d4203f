/**
 * The alter queue of a sink (`enableCache` + `resendAlterQueue`, rules-and-sinks.md §3.4): the
 * main sink never retries; an item it fails to send (IO error) goes to the cache operator
 * `op_<type>_<i>_cache` (memory up to `memoryCacheThreshold`, then disk pages, oldest page dropped
 * and counted past `maxDiskCache`) that feeds a second instance of the connector,
 * `sink_<type>_<i>_resend`, which retries every `resendInterval` (100 ms when 0) in order.
 *
 * - `resendDestination` replaces the resend instance's `topic` (the rule builds its connector).
 * - `resendIndicatorField`: a resent item carries that field set to true (each row of it; the
 *   payload is re-encoded from the rows it was made of). Items sent on time are unchanged.
 * - `resendPriority` (eKuiper's three levels): 0 — the two instances send independently, so
 *   cached and fresh items interleave; 1 — cached items first: while the queue holds anything,
 *   fresh items join its tail instead of being sent, so everything arrives in order; −1 — fresh
 *   items first: a cached item is resent only while the main sink is idle.
 *
 * The queue is saved at stop (unless `cleanCacheAtStop`) and resent first at the next start.
 */
import { errorText, IoError } from "../errors.ts";
import { NodeMetrics } from "../core/metrics.ts";
import { cacheDb, SinkCacheStore } from "../store/sink-cache.ts";
import type { CacheConf } from "./common.ts";
import type { SinkConnector, SinkItem } from "./connector.ts";
import { ConnectionReporter } from "../core/connection.ts";
import { elapsedUs } from "./payload.ts";
import { CachedQueue } from "./cached-queue.ts";

export interface ResendInit {
  readonly ruleId: string;
  /** The main sink's node name, e.g. `mqtt_0`. */
  readonly name: string;
  /** `<type>_<index>`-based name of the cache operator, e.g. `mqtt_0_cache`. */
  readonly cacheName: string;
  readonly conf: CacheConf;
  readonly connector: SinkConnector;
  readonly dataDir: string;
  /** Re-encodes an item with the resend indicator set (when `resendIndicatorField` is set). */
  readonly mark: ((item: SinkItem) => SinkItem) | null;
  /** Whether the main sink has items queued or in flight (`resendPriority: -1`). */
  readonly mainBusy: () => boolean;
  log(line: string): void;
}

export class ResendSink {
  readonly cacheNode: NodeMetrics;
  readonly sink: NodeMetrics;
  readonly status = new ConnectionReporter();
  private readonly queue: CachedQueue;
  private readonly retryMs: number;
  private worker: Promise<void> | undefined;
  private wakeFn: (() => void) | undefined;
  private aborted = false;
  private sleepTimer: ReturnType<typeof setTimeout> | undefined;
  private sleepDone: (() => void) | undefined;
  /** Items lost: non-IO failures of the resend instance. */
  lost = 0;
  /** Sends that completed (SinkConnector.confirmed counts in them). */
  private sentOk = 0;

  constructor(private readonly init: ResendInit) {
    this.cacheNode = new NodeMetrics("op", init.cacheName);
    this.sink = new NodeMetrics("sink", `${init.name}_resend`);
    this.status.attach(this.sink);
    const onDrop = (n: number) => this.cacheNode.exception(`buffer full, drop ${n} message(s) from ${init.name} to resend sink`, Date.now());
    this.queue = new CachedQueue(init.conf, new SinkCacheStore(cacheDb(init.dataDir), `sink/${init.ruleId}/${init.cacheName}`), onDrop);
    this.retryMs = init.conf.resendInterval > 0 ? init.conf.resendInterval : 100;
  }

  /** Items waiting to be resent (memory and disk). */
  get length(): number {
    return this.queue.length;
  }

  get dropped(): number {
    return this.queue.dropped;
  }

  /** Nothing waits to be resent, none is being resent, and the destination confirmed every resend. */
  get settled(): boolean {
    return this.queue.length === 0 && (this.init.connector.confirmed?.() ?? this.sentOk) >= this.sentOk;
  }

  open(): void {
    const ready = Promise.resolve(this.init.connector.open({ ruleId: this.init.ruleId, name: this.sink.name, status: this.status, metrics: this.sink, log: this.init.log }));
    this.worker = this.work(ready);
    if (this.queue.length > 0) this.updateGauge();
  }

  /** A failed (or, with priority 1, diverted) item from the main sink. */
  take(item: SinkItem, now: number): void {
    const c = this.cacheNode;
    c.recordsIn++;
    c.lastInvocation = now;
    // Failures are few: every take is timed (a full page spills to disk).
    const t0 = performance.now();
    this.queue.push(item);
    c.processLatencyUs = elapsedUs(t0);
    this.updateGauge();
    this.wake();
  }

  /** The main sink went idle (`resendPriority: -1` waits for it). */
  mainIdle(): void {
    if (this.queue.length > 0) this.wake();
  }

  private updateGauge(): void {
    this.sink.bufferLength = this.queue.memLength;
    this.cacheNode.bufferLength = this.queue.length;
  }

  private wake(): void {
    const f = this.wakeFn;
    if (f) {
      this.wakeFn = undefined;
      f();
    }
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
    const lowPriority = this.init.conf.resendPriority < 0;
    for (;;) {
      if (this.aborted) return;
      const item = q.peek();
      if (item === undefined || (lowPriority && this.init.mainBusy())) {
        await new Promise<void>((r) => (this.wakeFn = r));
        continue;
      }
      const t0 = performance.now();
      try {
        const out = this.init.mark ? this.init.mark(item) : item;
        const r = this.init.connector.send(out);
        if (r) await r;
      } catch (e) {
        if (this.aborted) return;
        m.exception(errorText(e), Date.now());
        if (e instanceof IoError) {
          // Not woken by new items: a failing destination is retried every resendInterval.
          await new Promise<void>((r) => {
            this.sleepDone = r;
            this.sleepTimer = setTimeout(r, this.retryMs);
          });
          continue;
        }
        this.init.log(`sink ${m.name} of rule ${this.init.ruleId} drops a message: ${errorText(e)}`);
        this.lost++;
        q.shift();
        this.updateGauge();
        continue;
      }
      const now = Date.now();
      m.recordsIn++;
      m.recordsOut++;
      m.messagesProcessed += item.rows;
      m.lastInvocation = now;
      m.processLatencyUs = elapsedUs(t0);
      this.cacheNode.recordsOut++;
      this.sentOk++;
      q.shift();
      this.updateGauge();
    }
  }

  /** Stops resending; what is left is saved for the next run unless `clean`. */
  async close(clean: boolean): Promise<void> {
    this.aborted = true;
    if (this.sleepTimer) clearTimeout(this.sleepTimer);
    this.sleepDone?.();
    this.wake();
    this.queue.stop(clean);
    this.updateGauge();
    try {
      await this.init.connector.close();
    } catch (e) {
      this.init.log(`sink ${this.sink.name} of rule ${this.init.ruleId} fails to close: ${errorText(e)}`);
    }
    this.status.detach(this.sink);
  }
}
