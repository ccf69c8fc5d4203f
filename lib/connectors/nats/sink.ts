/**
 * The NATS sink (docs/connectors.md, "NATS"): publishes each payload to `subject` (a template allowed), with
 * `headers` (a map, template values allowed). Core NATS by default; with `jetstream: true` (or a
 * `stream`, which the server then checks) it publishes to JetStream and waits for the stream's
 * acknowledgement, with a `Nats-Msg-Id` so that a retried or replayed publish is stored once
 * (the stream's duplicate window, 2 min by default).
 *
 * The message id is `msgId` rendered for the item when set (e.g. `{{.deviceId}}-{{.window_end}}`),
 * else `<ruleId>:<key>`, the item's emission key (SinkItem.key: the sink, and the pipeline's count
 * of the items it made under an epoch of the run, checkpointed with the rule). A retried
 * publish, a resend from the cache and an emission replayed after a restore from a checkpoint
 * (a restart, a failover in a group) carry the id they had, so the stream stores them once; two
 * distinct emissions never share one, even with byte-identical payloads (eKuiper's sink sets no
 * id: it stores both, and a replay twice). Publishes the stream answers as duplicates are counted
 * on the sink node (`duplicates_total`, Prometheus `floe_sink_duplicates_total`).
 *
 * Publishing while disconnected fails at once with `nats client is not connected` (an IO error:
 * the cache and retry engage). JetStream publishes are pipelined (`maxInflight`, 64) with one
 * reply subscription for their acknowledgements; one whose
 * acknowledgement fails later (timeout, connection lost, no stream answering) is published again
 * (same id) before the next item goes out; one the stream refuses (wrong `stream`, too large) is
 * dropped and logged.
 */
import { headers as natsHeaders, type Msg, type MsgHdrs, type Subscription } from "@nats-io/transport-node";
import { JetStreamApiError, type JetStreamClient } from "@nats-io/jetstream";
import { EngineError, errorText, IoError } from "../../errors.ts";
import type { ConnectionRegistry } from "../connections.ts";
import { parseNatsConf, type NatsConf } from "./conf.ts";
import { NatsLink } from "./connection.ts";
import { PropReader, type Props } from "../../config/props.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../../sink/connector.ts";

/** Core publishes between two flushes (a round trip bounds what the client buffers). */
const FLUSH_EVERY = 1024;

/** How long a JetStream publish waits for the stream's acknowledgement before it is published again. */
const ACK_TIMEOUT = 5000;

/** A JetStream publish: its headers hold Nats-Msg-Id (and Nats-Expected-Stream). */
class Pending {
  at = 0;
  /** The publish's number among the sends that completed (SinkConnector.confirmed). */
  seq = 0;
  constructor(
    readonly subject: string,
    readonly payload: Uint8Array,
    readonly headers: MsgHdrs,
  ) {}
}

export class NatsSink implements SinkConnector {
  readonly bytes = true;
  /** A JetStream publish takes its default message id from the item's emission key. */
  readonly keyed: boolean;
  private readonly conf: NatsConf | undefined;
  private readonly subject: string;
  private readonly jetstream: boolean;
  private readonly stream: string;
  private readonly msgId: string;
  private readonly headers: Record<string, unknown> | undefined;
  private readonly selector: string;
  private readonly maxInflight: number;
  private link: NatsLink | undefined;
  private js: JetStreamClient | undefined;
  private ctx: SinkContext | undefined;
  private shared: { ref: string } | undefined;
  private inflight = 0;
  private sinceFlush = 0;
  private slot: (() => void) | undefined;
  private idle: (() => void) | undefined;
  /** JetStream publishes whose acknowledgement failed: published again before the next item. */
  private failed: Pending[] = [];
  /** JetStream publishes awaiting their acknowledgement, by the reply token. */
  private readonly waiting = new Map<number, Pending>();
  private nextId = 0;
  /** Publishes made so far: the sends that completed, numbered in order (Pending.seq). */
  private taken = 0;
  private readonly inbox = `_INBOX.floe.${crypto.randomUUID().replaceAll("-", "")}`;
  private acks: Subscription | undefined;
  private expiry: ReturnType<typeof setInterval> | undefined;
  /** Publishes the stream refused (dropped, logged). */
  refused = 0;

  constructor(
    props: Props,
    private readonly connections?: ConnectionRegistry,
  ) {
    const r = new PropReader(props);
    this.subject = r.str("subject");
    if (!this.subject) throw new EngineError("nats sink is missing property subject");
    if (!this.subject.includes("{{") && /(^|\.)(\*|>)(\.|$)/.test(this.subject)) throw new EngineError("nats sink subject shouldn't contain * or >");
    this.stream = r.str("stream");
    this.jetstream = r.bool("jetstream") || !!this.stream;
    this.msgId = r.str("msgId");
    this.headers = r.obj("headers");
    this.selector = r.str("connectionSelector");
    this.maxInflight = r.int("maxInflight", 64);
    if (this.maxInflight < 1) throw new EngineError(`invalid maxInflight ${this.maxInflight}`);
    this.conf = this.selector ? undefined : parseNatsConf(props);
    this.keyed = this.jetstream;
  }

  async open(ctx: SinkContext): Promise<void> {
    this.ctx = ctx;
    // Publishes the stream reports as duplicates (ids seen within its window) are counted on the node.
    if (this.jetstream) ctx.metrics.destinationDuplicates = Math.max(0, ctx.metrics.destinationDuplicates);
    if (this.selector) {
      if (!this.connections) throw new EngineError(`connection ${this.selector} not existed`);
      const ref = `${ctx.ruleId}_${ctx.name}_0`;
      this.link = this.connections.acquireNats(this.selector, ref);
      this.shared = { ref };
      this.link.status.link(ctx.status);
    } else this.link = new NatsLink(this.conf!, (l, level) => ctx.log(l, level), ctx.status);
    if (this.jetstream) this.js = await this.link.jetstream();
    const nc = await this.link.ready;
    if (this.jetstream) {
      // Pipelined publishes with one reply subscription for all their acknowledgements: the
      // client's js.publish costs a request (promise, timer, mux entry) per message, about four
      // times the CPU (bench/nats.ts).
      this.acks = nc.subscribe(`${this.inbox}.*`, { callback: (_e, m) => this.onAck(m) });
      this.expiry = setInterval(() => this.expire(), 1000);
    }
  }

  /**
   * The publishes before the oldest one still awaiting its acknowledgement or to be published
   * again. Acknowledgements arrive in order, but a failed one is published again after later ones
   * were confirmed: those count only once it is.
   */
  confirmed(): number {
    let low = this.taken + 1;
    for (const p of this.waiting.values()) {
      // Insertion order is publish order: the first entry is the oldest.
      low = p.seq;
      break;
    }
    for (const p of this.failed) if (p.seq < low) low = p.seq;
    return low - 1;
  }

  private headersOf(item: SinkItem): MsgHdrs | undefined {
    const p = item.props;
    const h = p && typeof p.headers === "object" && p.headers ? (p.headers as Record<string, unknown>) : this.headers;
    if (!h) return undefined;
    const out = natsHeaders();
    for (const [k, v] of Object.entries(h)) out.set(k, typeof v === "string" ? v : JSON.stringify(v));
    return out;
  }

  send(item: SinkItem): Promise<void> | void {
    const link = this.link!;
    if (!link.connected) throw new IoError("nats client is not connected");
    const p = item.props;
    const subject = typeof p?.subject === "string" ? p.subject : this.subject;
    const payload = typeof item.payload === "string" ? new TextEncoder().encode(item.payload) : (item.payload as Uint8Array);
    if (!this.js) {
      const hdrs = this.headersOf(item);
      try {
        link.nc!.publish(subject, payload, hdrs ? { headers: hdrs } : undefined);
      } catch (e) {
        throw new IoError(`publish to nats failed: ${errorText(e)}`);
      }
      if (++this.sinceFlush >= FLUSH_EVERY) {
        this.sinceFlush = 0;
        return link.nc!.flush().catch((e: unknown) => {
          throw new IoError(`publish to nats failed: ${errorText(e)}`);
        });
      }
      return;
    }
    const id = typeof p?.msgId === "string" && p.msgId ? p.msgId : this.msgId && !this.msgId.includes("{{") ? this.msgId : this.defaultId(item, subject, payload);
    const hdrs = this.headersOf(item) ?? natsHeaders();
    hdrs.set("Nats-Msg-Id", id);
    if (this.stream) hdrs.set("Nats-Expected-Stream", this.stream);
    const pend = new Pending(subject, payload, hdrs);
    if (this.failed.length > 0) return this.retryFailed().then(() => this.publish(pend));
    return this.publish(pend);
  }

  /**
   * `<ruleId>:<emission key>` (see the file comment). An item without a key (read from the cache
   * pages of an older floe) falls back to `<ruleId>:<subject>:<64-bit hash of the payload>`.
   */
  private defaultId(item: SinkItem, subject: string, payload: Uint8Array): string {
    const rule = this.ctx!.ruleId;
    return item.key ? `${rule}:${item.key}` : `${rule}:${subject}:${Bun.hash(payload).toString(16)}`;
  }

  private publish(pend: Pending): Promise<void> | void {
    const id = ++this.nextId;
    try {
      this.link!.nc!.publish(pend.subject, pend.payload, { reply: `${this.inbox}.${id}`, headers: pend.headers });
    } catch (e) {
      throw new IoError(`publish to nats failed: ${errorText(e)}`);
    }
    pend.at = Date.now();
    pend.seq = ++this.taken;
    this.waiting.set(id, pend);
    this.inflight++;
    if (this.inflight >= this.maxInflight) return new Promise((r) => (this.slot = r));
  }

  /** The stream's answer to publish `<inbox>.<id>`: a PubAck, an API error, or 503 (no stream listens). */
  private onAck(m: Msg): void {
    const id = Number(m.subject.slice(this.inbox.length + 1));
    const pend = this.waiting.get(id);
    if (!pend) return;
    this.waiting.delete(id);
    const code = m.headers?.code ?? 0;
    if (code >= 400 || m.data.length === 0) {
      this.retry(pend, code === 503 ? "no stream answers for this subject" : `${code} ${m.headers?.description ?? ""}`);
      return;
    }
    let r: { duplicate?: boolean; error?: { description?: string } };
    try {
      r = JSON.parse(m.string()) as typeof r;
    } catch {
      r = {};
    }
    if (r.error) {
      // The stream refused it (another stream, too large, …): publishing it again cannot succeed.
      this.refused++;
      this.ctx?.log(`nats sink ${this.ctx.name}: publish to ${pend.subject} refused by the stream, dropped: ${r.error.description ?? "error"}`);
    } else if (r.duplicate) this.ctx!.metrics.destinationDuplicates++;
    this.settle();
  }

  private retry(pend: Pending, why: string): void {
    this.failed.push(pend);
    this.ctx?.log(`publish to nats stream failed (published again before the next item): ${why}`);
    this.settle();
  }

  /**
   * Every second: publishes without an answer within ACK_TIMEOUT (lost with a connection) join the
   * failed ones, which are published again now when no item is coming to take them along.
   */
  private expire(): void {
    const old = Date.now() - ACK_TIMEOUT;
    for (const [id, p] of this.waiting) {
      if (p.at > old) continue;
      this.waiting.delete(id);
      this.retry(p, "no acknowledgement from the stream");
    }
    if (this.failed.length > 0 && this.link?.connected) this.retryFailed().catch(() => undefined);
  }

  /** One republishing at a time, shared by the next send and the timer. */
  private retryFailed(): Promise<void> {
    this.retrying ??= this.republish().finally(() => (this.retrying = undefined));
    return this.retrying;
  }

  private retrying: Promise<void> | undefined;

  private settle(): void {
    this.inflight--;
    const s = this.slot;
    this.slot = undefined;
    s?.();
    if (this.inflight === 0) this.idle?.();
  }

  /** Publishes the failed ones again, one at a time; an IO error leaves the rest for the next try. */
  private async republish(): Promise<void> {
    while (this.failed.length > 0) {
      if (!this.link!.connected) throw new IoError("nats client is not connected");
      const pend = this.failed[0]!;
      try {
        const ack = await this.js!.publish(pend.subject, pend.payload, { headers: pend.headers });
        if (ack.duplicate) this.ctx!.metrics.destinationDuplicates++;
      } catch (e) {
        if (!(e instanceof JetStreamApiError)) throw new IoError(`publish to nats stream failed: ${errorText(e)}`);
        this.refused++;
        this.ctx?.log(`nats sink ${this.ctx.name}: publish to ${pend.subject} refused by the stream, dropped: ${errorText(e)}`);
      }
      this.failed.shift();
    }
  }

  async close(): Promise<void> {
    if (this.inflight > 0 && this.link?.connected) await Promise.race([new Promise<void>((r) => (this.idle = r)), Bun.sleep(2000)]);
    clearInterval(this.expiry);
    for (const p of this.waiting.values()) this.failed.push(p);
    this.waiting.clear();
    try {
      this.acks?.unsubscribe();
    } catch {
      // closed with the connection
    }
    if (this.failed.length > 0 && this.link?.connected) await Promise.race([this.retryFailed().catch(() => undefined), Bun.sleep(2000)]);
    if (this.failed.length > 0) this.ctx?.log(`nats sink ${this.ctx.name}: ${this.failed.length} publish(es) not acknowledged by the stream at close`);
    const sh = this.shared;
    if (sh) {
      this.shared = undefined;
      this.link?.status.unlink(this.ctx!.status);
      await this.connections!.release(this.selector, sh.ref);
      return;
    }
    await this.link?.close();
  }
}
