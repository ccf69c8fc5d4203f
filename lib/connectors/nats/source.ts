/**
 * The NATS source (docs/connectors.md, "NATS"): core subjects or a JetStream consumer.
 *
 * Core: subscribes the stream's DATASOURCE subjects (comma separated, `*` and `>` wildcards),
 * in a `queue` group when given (the server then gives each message to one member). Core NATS has
 * no flow control: what the rule cannot take yet waits in a bounded backlog (`pendingLimit`
 * messages), beyond which messages are dropped and counted as exceptions — at most once, as the
 * server itself does with slow consumers.
 *
 * JetStream (`stream`, `durable` or `jetstream: true`): reads a pull consumer in batches
 * (lib/connectors/nats/consumer.ts) and acknowledges a message only once the rule has taken it from the
 * bus (ackMode `take`), or, when the rule keeps checkpoints of its state and is the only reader,
 * once the checkpoint covering it is stored (ackMode `checkpoint`). A kill -9 therefore loses
 * nothing: the server redelivers everything unacknowledged (after ackWait). In ackMode
 * `checkpoint` the checkpoint records the highest stream sequence taken; a restored run recreates
 * the consumer to deliver from the next sequence, in order, so windows see what they would have
 * seen (the source must be the consumer's only reader). Redeliveries are counted as duplicates;
 * those of messages still waiting for their acknowledgement here (or taken in the same batch) are
 * skipped, those already in the restored checkpoint or in one stored since are acknowledged and
 * skipped, so the state counts each message once.
 *
 * Metadata: `subject`, `headers` (when the message has any); JetStream adds `stream`, `seq`,
 * `deliveries`, `timestamp` (ms).
 */
import type { Msg, MsgHdrs, Subscription } from "@nats-io/transport-node";
import { AckPolicy, type ConsumerInfo, type JetStreamManager } from "@nats-io/jetstream";
import { EngineError, errorText } from "../../errors.ts";
import type { Bus } from "../../core/bus.ts";
import type { Obj, Value } from "../../value/values.ts";
import type { ConnectionRegistry } from "../connections.ts";
import { parseNatsConf, type NatsConf } from "./conf.ts";
import { NatsLink } from "./connection.ts";
import { AckWindow } from "./ack-window.ts";
import { deliverPolicyOf, ensureConsumer, PullReader, type ConsumerSpec, type JsDelivery } from "./consumer.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { SourceMessage } from "../../source/message.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";

export class NatsMeta {
  [key: string]: Value;
  subject: string;
  constructor(subject: string, headers: MsgHdrs | undefined) {
    this.subject = subject;
    if (headers) this.headers = headersObj(headers);
  }
}

/** Header name → value (the last one when repeated). */
export function headersObj(h: MsgHdrs): Obj {
  const out: Obj = {};
  for (const k of h.keys()) out[k] = h.last(k);
  return out;
}

function jsMeta(d: JsDelivery, stream: string): NatsMeta {
  const m = new NatsMeta(d.subject, d.headers);
  m.stream = stream;
  m.seq = BigInt(d.seq);
  m.deliveries = BigInt(d.deliveries);
  m.timestamp = BigInt(d.timestamp);
  return m;
}

export interface NatsSourceOptions {
  readonly base?: string;
  readonly connections?: ConnectionRegistry;
}

/** The saved read position of a JetStream source (`$$offset`): the highest stream sequence taken. */
interface NatsOffset {
  readonly stream: string;
  readonly consumer: string;
  readonly seq: number;
}

function isOffset(v: unknown): v is NatsOffset {
  return !!v && typeof v === "object" && typeof (v as NatsOffset).seq === "number";
}

export class NatsSource implements SourceConnector {
  readonly subjects: string[];
  readonly queue: string;
  readonly selector: string;
  readonly conf: NatsConf | undefined;
  /** JetStream consumer settings, or undefined for core subscriptions. */
  readonly js: ConsumerSpec | undefined;
  readonly holdsAcks: boolean;
  /** `ackPolicy` was set: otherwise a consumer floe creates for acknowledging at checkpoints uses AckAll. */
  private readonly ackPolicySet: boolean;
  private readonly pullBatch: number;
  private readonly pendingLimit: number;
  private readonly eof: Uint8Array | undefined;
  private link: NatsLink | undefined;
  private ctx: SourceContext | undefined;
  private closed = false;
  private ended = false;
  private subs: Subscription[] = [];
  private unReconnect: () => void = () => {};
  private shared: { ref: string; status: SourceContext["status"] } | undefined;
  // Core: messages waiting for room on the bus.
  private backlog: SourceMessage[] = [];
  private backlogHead = 0;
  private flushQueued = false;
  private waiting = false;
  // JetStream: the reader and what it admitted and has not acknowledged yet.
  private reader: PullReader | undefined;
  private window: AckWindow | undefined;
  private streamName = "";
  private consumerName = "";
  /** From the restored checkpoint: redeliveries up to this sequence are already in the state. */
  private restoredSeq = 0;
  private ackQueued = false;
  /** The end marker (eofMessage) of a source acknowledging at checkpoints with AckAll, acknowledged once a checkpoint covers everything before it. */
  private eofDelivery: JsDelivery | undefined;
  private refresher: ReturnType<typeof setInterval> | undefined;

  constructor(
    props: Props,
    private readonly opts: NatsSourceOptions = {},
  ) {
    const r = new PropReader(props);
    this.subjects = r
      .str("datasource")
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t);
    this.queue = r.str("queue");
    this.selector = r.str("connectionSelector");
    this.pullBatch = r.int("pullBatch", 1024);
    if (this.pullBatch < 1) throw new EngineError(`invalid pullBatch ${this.pullBatch}`);
    this.pendingLimit = r.int("pendingLimit", 65536);
    const eof = r.str("eofMessage");
    this.eof = eof ? new Uint8Array(Buffer.from(eof, "base64")) : undefined;
    const stream = r.str("stream");
    const durable = r.str("durable");
    const jetstream = r.bool("jetstream") || !!stream || !!durable;
    if (jetstream) {
      if (this.queue) throw new EngineError("nats: queue is for core subscriptions; JetStream consumers share work through a durable");
      if (this.subjects.length > 1) throw new EngineError("nats: a JetStream source reads one subject filter");
      if (!stream && this.subjects.length === 0) throw new EngineError("nats: a JetStream source needs stream or a subject");
      this.ackPolicySet = r.str("ackPolicy") !== "";
      const ap = r.str("ackPolicy", "explicit").toLowerCase();
      if (ap !== "explicit" && ap !== "all") throw new EngineError(`invalid ackPolicy ${ap}: explicit or all`);
      this.js = {
        stream,
        durable,
        subject: this.subjects[0] ?? "",
        deliverPolicy: deliverPolicyOf(r.str("deliverPolicy", "all")),
        startSeq: r.int("startSequence", 0),
        startTime: r.str("startTime"),
        ackWait: r.duration("ackWait", 30_000),
        maxAckPending: r.int("maxAckPending", 65536),
        ackPolicy: ap,
      };
      if (this.js.ackWait < 1) throw new EngineError("invalid ackWait: must be positive");
    } else {
      this.ackPolicySet = false;
      if (this.subjects.length === 0) throw new EngineError("subject is required");
    }
    this.holdsAcks = !!this.js;
    this.conf = this.selector ? undefined : parseNatsConf(props, { base: opts.base });
  }

  async open(ctx: SourceContext): Promise<void> {
    this.ctx = ctx;
    if (this.selector) {
      const reg = this.opts.connections;
      if (!reg) throw new EngineError(`connection ${this.selector} not existed`);
      this.link = reg.acquireNats(this.selector, ctx.ref);
      this.shared = { ref: ctx.ref, status: ctx.status };
      this.link.status.link(ctx.status);
    } else this.link = new NatsLink(this.conf!, (l, level) => ctx.log(l, level), ctx.status);
    const start = this.js ? this.startJetStream(ctx, this.js) : this.startCore(ctx);
    start.catch((e: unknown) => {
      if (!this.closed) ctx.fail(new EngineError(errorText(e), undefined, { cause: e }));
    });
  }

  private where(): string {
    return this.link!.conf.label;
  }

  private isEof(data: Uint8Array): boolean {
    const eof = this.eof;
    return eof !== undefined && data.length === eof.length && Buffer.compare(data, eof) === 0;
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.ctx!.eof();
  }

  // ---- core subscriptions ----

  private async startCore(ctx: SourceContext): Promise<void> {
    const nc = await this.link!.ready;
    if (this.closed) return;
    const opts = this.queue ? { queue: this.queue } : {};
    for (const subject of this.subjects) {
      this.subs.push(
        nc.subscribe(subject, {
          ...opts,
          callback: (err, m) => (err ? ctx.exception(err.message) : this.onCore(m)),
        }),
      );
    }
    // The server holds the subscriptions once it answers a PING: only then is the source announced
    // (a publish made right after the announcement would otherwise race the SUB and be missed).
    await nc.flush();
    if (this.closed) return;
    const where = `${this.where()}, subscribed to ${this.subjects.join(",")}${this.queue ? ` in queue group ${this.queue}` : ""}`;
    this.announce(ctx, where);
  }

  private announce(ctx: SourceContext, where: string): void {
    if (!ctx.ready || this.closed) return;
    ctx.ready(`connected to ${where}`);
    this.unReconnect = this.link!.onReconnect(() => ctx.ready!(`reconnected to ${where}`));
  }

  private onCore(m: Msg): void {
    if (this.ended || this.closed) return;
    if (this.isEof(m.data)) {
      this.flushCore();
      this.end();
      return;
    }
    const held = this.backlog.length - this.backlogHead;
    if (held >= this.pendingLimit) {
      this.dropped++;
    } else this.backlog.push(new SourceMessage(m.data, null, new NatsMeta(m.subject, m.headers)));
    if (!this.flushQueued) {
      this.flushQueued = true;
      // Every message of one socket read joins one batch: the client calls back synchronously.
      queueMicrotask(this.flushCore);
    }
  }

  private dropped = 0;

  private readonly flushCore = (): void => {
    this.flushQueued = false;
    const ctx = this.ctx!;
    if (this.dropped > 0) {
      ctx.exception(`buffer full, drop ${this.dropped} message(s) from subject ${this.subjects.join(",")}`);
      this.dropped = 0;
    }
    if (this.waiting || this.closed) return;
    const bus: Bus<SourceMessage> = ctx.bus;
    const q = this.backlog;
    while (this.backlogHead < q.length) {
      const to = Math.min(q.length, this.backlogHead + Math.max(1, Math.min(1024, bus.maxBatch)));
      if (!bus.publish(q, this.backlogHead, to)) {
        this.waiting = true;
        bus.onDrain(() => {
          this.waiting = false;
          this.flushCore();
        });
        return;
      }
      this.backlogHead = to;
    }
    this.backlog = [];
    this.backlogHead = 0;
  };

  // ---- JetStream ----

  private async startJetStream(ctx: SourceContext, given: ConsumerSpec): Promise<void> {
    const link = this.link!;
    const jsm = await link.manager();
    if (this.closed) return;
    const checkpointMode = ctx.ackMode === "checkpoint";
    // Acknowledging at checkpoints, the source is its consumer's only reader and acknowledges in
    // order: one AckAll per checkpoint covers what a +ACK per message would (the server then does
    // one acknowledgement's work per checkpoint, not one per message).
    const spec: ConsumerSpec = checkpointMode && !this.ackPolicySet ? { ...given, ackPolicy: "all" } : given;
    // Restored from a checkpoint: the consumer restarts right after what the checkpoint holds.
    const resumeAt = checkpointMode && this.restoredSeq > 0 ? this.restoredSeq + 1 : 0;
    // Otherwise what the durable delivered and nobody acknowledged (a run killed before its first
    // checkpoint read anything) is delivered again first, in order (ensureConsumer).
    const found = await this.consumer(ctx, jsm, spec, resumeAt, checkpointMode && resumeAt === 0);
    if (!found || this.closed) return;
    const { stream, info } = found;
    this.streamName = stream;
    this.consumerName = info.name;
    const bus: Bus<SourceMessage> = ctx.bus;
    // The consumer's own policy decides (an existing durable keeps the one it was created with).
    const ackAll = info.config.ack_policy === AckPolicy.All;
    const window = new AckWindow(ackAll);
    this.window = window;
    if (!checkpointMode) bus.onTake = this.onTake;
    const scratch: SourceMessage[] = [];
    const taken: JsDelivery[] = [];
    const wantsMeta = ctx.wantsMeta;
    const reader = new PullReader(
      link,
      stream,
      info.name,
      {
        deliver: (batch, receivedAt) => {
          if (this.ended) return true;
          // The rule left (stopping): nothing is admitted, so nothing more is acknowledged.
          if (bus.subscribers === 0) return false;
          scratch.length = 0;
          taken.length = 0;
          let dups = 0;
          let atEof = false;
          /** The sequences taken from this batch so far, once it holds a redelivery. */
          let inBatch: Set<number> | undefined;
          for (let i = 0; i < batch.length; i++) {
            const d = batch[i]!;
            if (d.deliveries > 1) {
              dups++;
              // Already in the state: in the restored checkpoint, or — the consumer's only reader,
              // in order — in a checkpoint stored since (the server redelivered it before that
              // checkpoint's acknowledgement reached it).
              if (d.seq <= this.restoredSeq || (checkpointMode && d.seq <= window.takenSeq)) {
                reader.ack(d);
                continue;
              }
              // Waiting for its acknowledgement here, or taken earlier in this batch (its first
              // delivery waited in the reader, refused by a full bus, past ackWait).
              if (window.holds(d.seq)) continue;
              inBatch ??= new Set(taken.map((t) => t.seq));
              if (inBatch.has(d.seq)) continue;
            }
            inBatch?.add(d.seq);
            if (this.isEof(d.data)) {
              // Its AckAll would cover what is admitted and not yet in a checkpoint: the end marker
              // waits for the checkpoint that covers everything before it.
              if (ackAll && checkpointMode) this.eofDelivery = d;
              else reader.ack(d);
              atEof = true;
              break;
            }
            scratch.push(new SourceMessage(d.data, null, wantsMeta === undefined || wantsMeta() ? jsMeta(d, stream) : null));
            taken.push(d);
          }
          if (scratch.length > 0 && !bus.publish(scratch)) return false;
          window.admit(taken, receivedAt);
          if (dups) ctx.duplicates(dups);
          if (atEof) this.end();
          // Nobody reads (no subscriber) or the rule took it at once: onTake acknowledges.
          if (!checkpointMode) this.onTake();
          return true;
        },
        onDrain: (fn) => {
          // Without a reader there is no drain to wait for: the batch is held until close.
          if (bus.subscribers > 0) bus.onDrain(fn);
        },
        get maxBatch() {
          return bus.maxBatch;
        },
        error: (m) => ctx.exception(m),
        lost: async () => {
          ctx.exception(`nats consumer ${stream}/${reader.consumer} is gone: creating it again`);
          const again = await this.consumer(ctx, jsm, spec, 0);
          if (again) reader.retarget(again.info.name);
        },
      },
      { batch: this.pullBatch },
    );
    this.reader = reader;
    await reader.start();
    if (checkpointMode) {
      // Taken messages wait for the next checkpoint, which may come after ackWait: keep their
      // ackWait timers from running out (the server would redeliver them meanwhile). Every tick
      // (a quarter of ackWait), those whose timer started two ticks before the end of ackWait or
      // earlier: each gets its +WPI with at least a tick to spare, and only a delivery that really
      // waited that long gets one (a slow member's messages wait seconds in its queues, each
      // costing the server a message per tick when refreshed sooner).
      const ackWaitMs = info.config.ack_wait ? info.config.ack_wait / 1_000_000 : spec.ackWait;
      const tick = Math.max(250, ackWaitMs / 4);
      const age = Math.max(0, ackWaitMs - 2 * tick);
      this.refresher = setInterval(() => window.keepAlive(reader, Date.now() - age), tick);
    }
    const where = `${this.where()}, consuming stream ${stream} with ${spec.durable ? `durable ${spec.durable}` : `consumer ${info.name}`}${spec.subject ? ` on ${spec.subject}` : ""}`;
    this.announce(ctx, where);
  }

  /**
   * Finds or creates the consumer; a refusal that names the configuration (no such stream, an
   * invalid setting) stops the rule, anything else (a timeout while the server restarts) is
   * counted and retried with back-off.
   */
  private async consumer(ctx: SourceContext, jsm: JetStreamManager, spec: ConsumerSpec, resumeAt: number, replayUnacked = false): Promise<{ stream: string; info: ConsumerInfo } | undefined> {
    let wait = 200;
    for (;;) {
      try {
        return await ensureConsumer(jsm, spec, resumeAt, replayUnacked);
      } catch (e) {
        if (this.closed) return undefined;
        const text = errorText(e);
        if (e instanceof EngineError || /not found|invalid|required|must|exceeds|exist/i.test(text)) throw e;
        ctx.exception(`nats consumer ${spec.stream}/${spec.durable}: ${text}`);
        await Bun.sleep(wait);
        wait = Math.min(wait * 2, 10_000);
        if (this.closed) return undefined;
      }
    }
  }

  /** ackMode take: acknowledges what every reader of the bus has taken (after the drain that took it). */
  private readonly onTake = (): void => {
    if (this.ackQueued) return;
    this.ackQueued = true;
    queueMicrotask(() => {
      this.ackQueued = false;
      const ctx = this.ctx;
      const w = this.window;
      if (!ctx || !this.reader || !w || ctx.bus.subscribers === 0) return;
      w.ackThrough(w.admitted - ctx.bus.backlog, this.reader);
    });
  };

  /** The checkpoint's `$$offset`: marks what the rule consumed; acknowledged at `checkpointed()`. */
  offset(unconsumed: number): unknown {
    if (!this.js) return undefined;
    const seq = Math.max(this.window?.markConsumed(unconsumed) ?? 0, this.restoredSeq);
    const o: NatsOffset = { stream: this.streamName || this.js.stream, consumer: this.consumerName || this.js.durable, seq };
    return o;
  }

  checkpointed(): void {
    const reader = this.reader;
    const w = this.window;
    if (!reader || !w) return;
    w.ackMark(reader);
    if (this.eofDelivery && w.pending === 0) {
      reader.ack(this.eofDelivery);
      this.eofDelivery = undefined;
    }
  }

  /** Before open: the restored checkpoint's position (redeliveries up to it are skipped). */
  rewind(state: unknown): void {
    if (!this.js) throw new EngineError("a core nats source is not rewindable");
    if (this.reader) throw new EngineError("a JetStream source rewinds only at start: redeliveries resume from its consumer's acknowledgement floor");
    if (isOffset(state)) this.restoredSeq = state.seq;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.refresher);
    this.unReconnect();
    const ctx = this.ctx;
    if (ctx && ctx.bus.onTake === this.onTake) ctx.bus.onTake = undefined;
    const reader = this.reader;
    if (reader) {
      // What was admitted and not acknowledged (not taken, or not covered by a stored checkpoint)
      // goes back to the server for redelivery now rather than after ackWait.
      this.window?.release(reader);
      reader.stop();
      // Whatever was acknowledged reaches the server before the connection goes.
      await Promise.race([reader.flushAcks().catch(() => undefined), Bun.sleep(1000)]);
    }
    for (const s of this.subs) {
      try {
        s.unsubscribe();
      } catch {
        // closed with the connection
      }
    }
    this.subs = [];
    const sh = this.shared;
    if (sh) {
      this.shared = undefined;
      this.link?.status.unlink(sh.status);
      await this.opts.connections?.release(this.selector, sh.ref);
      return;
    }
    await this.link?.close();
  }
}
