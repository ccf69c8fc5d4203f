/**
 * A JetStream pull consumer read in batches, with explicit acknowledgements.
 *
 * `ensureConsumer` finds or creates the consumer (durable, or ephemeral when no durable is named)
 * on a stream, which is named or found by subject. `PullReader` issues one pull request at a
 * time (`CONSUMER.MSG.NEXT` with `batch`, `expires` and an idle heartbeat) on a subscription of
 * its own, gathers the messages each socket read brings, and hands them to its handler as one
 * batch; the next pull goes out only once the handler admitted the batch, so a reader never holds
 * more than one batch and a slow rule simply stops pulling (backpressure). Acknowledging is the
 * caller's business (`ack`, `nak`, `working`, `term` by reply subject), so a rule can acknowledge
 * when it has taken a message or when the checkpoint covering it is saved.
 *
 * The pull protocol is the JetStream API used directly over the official client's core
 * connection: the client's own `fetch()` yields one message per promise and has no way to hold
 * the next pull until the rule has room.
 */
import type { Msg, MsgHdrs, NatsConnection, Subscription } from "@nats-io/transport-node";
import { AckPolicy, DeliverPolicy, type ConsumerConfig, type ConsumerInfo, type JetStreamManager } from "@nats-io/jetstream";
import { EngineError } from "../../errors.ts";
import type { NatsLink } from "./connection.ts";

/** What to read and from where (docs/connectors.md, "NATS"). */
export interface ConsumerSpec {
  /** The stream; "" finds the stream whose subjects cover `subject`. */
  readonly stream: string;
  /** The durable consumer's name; "" for an ephemeral consumer (gone 5 min after its reader). */
  readonly durable: string;
  /** The subject filter (wildcards allowed); "" for every subject of the stream. */
  readonly subject: string;
  /** `all`, `new`, `last`, `last_per_subject`, `by_start_sequence`, `by_start_time`: applied when the consumer is created. */
  readonly deliverPolicy: string;
  /** With `by_start_sequence`. */
  readonly startSeq: number;
  /** With `by_start_time`: an RFC 3339 time. */
  readonly startTime: string;
  /** How long the server waits for an acknowledgement before redelivering, ms. */
  readonly ackWait: number;
  /** Unacknowledged messages the server lets out at once (-1: no limit). */
  readonly maxAckPending: number;
  /** `explicit` (each message) or `all` (acknowledging one covers every earlier one). */
  readonly ackPolicy: "explicit" | "all";
}

const DELIVER: Record<string, DeliverPolicy> = {
  all: DeliverPolicy.All,
  new: DeliverPolicy.New,
  last: DeliverPolicy.Last,
  last_per_subject: DeliverPolicy.LastPerSubject,
  by_start_sequence: DeliverPolicy.StartSequence,
  by_start_time: DeliverPolicy.StartTime,
};

/** Validates a deliver policy name (props use the server's spelling; `bystartsequence` too). */
export function deliverPolicyOf(name: string): string {
  const key = name.toLowerCase().replace(/[-\s]/g, "_");
  const norm = key === "bystartsequence" || key === "start_sequence" ? "by_start_sequence" : key === "bystarttime" || key === "start_time" ? "by_start_time" : key === "lastpersubject" ? "last_per_subject" : key;
  if (!DELIVER[norm]) throw new EngineError(`invalid deliverPolicy ${name}: one of all, new, last, last_per_subject, by_start_sequence, by_start_time`);
  return norm;
}

const NS = 1_000_000;

/** The consumer configuration floe creates for `spec`. */
export function consumerConfig(spec: ConsumerSpec): Partial<ConsumerConfig> {
  const cfg: Partial<ConsumerConfig> = {
    ack_policy: spec.ackPolicy === "all" ? AckPolicy.All : AckPolicy.Explicit,
    deliver_policy: DELIVER[spec.deliverPolicy]!,
    ack_wait: spec.ackWait * NS,
    max_ack_pending: spec.maxAckPending,
  };
  if (spec.durable) cfg.durable_name = spec.durable;
  else cfg.inactive_threshold = 5 * 60_000 * NS;
  if (spec.subject) cfg.filter_subject = spec.subject;
  if (spec.deliverPolicy === "by_start_sequence") cfg.opt_start_seq = Math.max(1, spec.startSeq);
  if (spec.deliverPolicy === "by_start_time") cfg.opt_start_time = new Date(spec.startTime || Date.now()).toISOString();
  return cfg;
}

/**
 * The consumer that reads `spec`: an existing durable is used as it is (its stored configuration
 * wins). With `resumeAt` (a stream sequence, from a restored checkpoint) the consumer is created
 * afresh to deliver from that sequence on, in order — an existing durable is deleted first: its
 * acknowledgement state is superseded by the checkpoint, and its unacknowledged messages would
 * otherwise come back only after ackWait, out of order.
 *
 * `replayUnacked` (a source acknowledging at checkpoints, restored from none or from one that read
 * nothing of it yet): an existing durable with deliveries awaiting acknowledgement is recreated to
 * deliver from its acknowledgement floor on (from its own start when nothing was acknowledged). Those deliveries went to a run that is
 * gone (a kill -9), and none is in a checkpoint: left alone, they would come back only after
 * ackWait, behind newer messages — too late for the event-time windows they belong to.
 */
export async function ensureConsumer(jsm: JetStreamManager, spec: ConsumerSpec, resumeAt = 0, replayUnacked = false): Promise<{ stream: string; info: ConsumerInfo }> {
  let stream = spec.stream;
  if (!stream) {
    if (!spec.subject) throw new EngineError("nats: a JetStream source needs stream or a subject");
    try {
      stream = await jsm.streams.find(spec.subject);
    } catch (e) {
      throw new EngineError(`nats: no stream covers subject ${spec.subject}: ${(e as Error).message}`, undefined, { cause: e });
    }
  }
  if (resumeAt > 0) {
    if (spec.durable) await deleteConsumer(jsm, stream, spec.durable);
    return { stream, info: await jsm.consumers.add(stream, consumerConfig({ ...spec, deliverPolicy: "by_start_sequence", startSeq: resumeAt })) };
  }
  if (spec.durable) {
    try {
      const info = await jsm.consumers.info(stream, spec.durable);
      if (replayUnacked && info.num_ack_pending > 0) {
        // Past its floor; or, nothing acknowledged yet, from its own start (its deliver policy).
        if (info.ack_floor.consumer_seq > 0) return ensureConsumer(jsm, spec, info.ack_floor.stream_seq + 1);
        await deleteConsumer(jsm, stream, spec.durable);
        return { stream, info: await jsm.consumers.add(stream, { ...info.config }) };
      }
      return { stream, info };
    } catch (e) {
      if (!/consumer not found/i.test((e as Error).message)) throw e;
    }
  }
  return { stream, info: await jsm.consumers.add(stream, consumerConfig(spec)) };
}

/**
 * Deletes a consumer; true when it is gone. nats-server 2.9 may refuse while the consumer writes
 * its state (`directory not empty`): retried a few times.
 */
export async function deleteConsumer(jsm: JetStreamManager, stream: string, name: string): Promise<boolean> {
  for (let i = 0; ; i++) {
    try {
      await jsm.consumers.delete(stream, name);
      return true;
    } catch (e) {
      if (/consumer not found/i.test((e as Error).message)) return true;
      if (i >= 10) throw e;
      await Bun.sleep(20 * (i + 1));
    }
  }
}

/** One delivered message, with its acknowledgement metadata parsed from the reply subject. */
export class JsDelivery {
  constructor(
    readonly subject: string,
    readonly data: Uint8Array,
    readonly headers: MsgHdrs | undefined,
    /** The `$JS.ACK…` subject acknowledgements go to. */
    readonly reply: string,
    /** The stream sequence: the message's identity in the stream. */
    readonly seq: number,
    /** How many times the server delivered it (> 1: a redelivery). */
    readonly deliveries: number,
    /** Stored at, ms since the epoch. */
    readonly timestamp: number,
    /** Messages left for the consumer after this one. */
    readonly pending: number,
  ) {}
}

/** Parses `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ns>.<pending>` (and the v2 form with domain and account). */
export function parseDelivery(m: Msg): JsDelivery | null {
  const reply = m.reply;
  if (!reply || !reply.startsWith("$JS.ACK.")) return null;
  // The dots' positions, without splitting the subject into strings (once per message).
  const dots = DOTS;
  let n = 0;
  for (let i = reply.indexOf("."); i >= 0 && n < dots.length; i = reply.indexOf(".", i + 1)) dots[n++] = i;
  const tokens = n + 1;
  const at = tokens === 9 ? 4 : tokens >= 11 && tokens <= dots.length ? 6 : -1;
  if (at < 0) return null;
  const end = (k: number) => (k < n ? dots[k]! : reply.length);
  const num = (k: number) => digits(reply, dots[k - 1]! + 1, end(k));
  // The timestamp's nanoseconds (19 digits) are beyond a double's precision: its milliseconds are the digits but the last six.
  const tsFrom = dots[at + 2]! + 1;
  const tsTo = end(at + 3);
  const ms = tsTo - tsFrom > 6 ? digits(reply, tsFrom, tsTo - 6) : 0;
  const seq = num(at + 1);
  const deliveries = num(at);
  const pending = num(at + 4);
  if (Number.isNaN(seq) || Number.isNaN(deliveries) || Number.isNaN(ms) || Number.isNaN(pending)) return null;
  return new JsDelivery(m.subject, m.data, m.headers, reply, seq, deliveries, ms, pending);
}

const DOTS = new Int32Array(12);

/** The decimal number in `s[from, to)`; NaN when it holds anything else (or nothing). */
function digits(s: string, from: number, to: number): number {
  if (to <= from) return NaN;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return NaN;
    v = v * 10 + c;
  }
  return v;
}

/** Where a PullReader's batches go. */
export interface PullHandler {
  /**
   * Admits the batch (all of it) or refuses it (nothing taken): the reader then waits for `onDrain`.
   * `receivedAt` (ms): when its first message came, where the server's ackWait timers started.
   */
  deliver(batch: JsDelivery[], receivedAt: number): boolean;
  /** Calls `fn` once when a refused batch may fit. */
  onDrain(fn: () => void): void;
  /** The largest batch `deliver` takes. */
  readonly maxBatch: number;
  /** A pull or the consumer failed (logged and retried). */
  error?(message: string): void;
  /**
   * The consumer is gone (503 no responders, 409 consumer deleted): recreate it (and `retarget`
   * when its name changed); pulling resumes when the promise resolves.
   */
  lost?(): Promise<void>;
}

export interface PullOptions {
  /** Messages per pull request (capped by the handler's maxBatch). */
  readonly batch?: number;
  /** How long a pull waits on the server for messages, ms (the server ends it with 408). */
  readonly expires?: number;
  /** The server's idle heartbeat while a pull waits, ms; two missed ones re-issue the pull. */
  readonly heartbeat?: number;
}

const ACK = new TextEncoder().encode("+ACK");
const WPI = new TextEncoder().encode("+WPI");
const TERM = new TextEncoder().encode("+TERM");

/**
 * Reads one consumer with pull requests, one at a time, each for at most one batch. Lives across
 * reconnects (the pull is re-issued); `stop` ends it.
 */
export class PullReader {
  private sub: Subscription | undefined;
  private nc: NatsConnection | undefined;
  private batch: JsDelivery[] = [];
  /** When the first message of `batch` came. */
  private batchAt = 0;
  /** Messages the current pull request may still bring (0: none outstanding). */
  private outstanding = 0;
  private waiting = false;
  private stopped = false;
  private recovering = false;
  private flushQueued = false;
  private lastSeen = 0;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private unReconnect: () => void = () => {};
  private readonly inbox: string;
  private readonly size: number;
  private readonly expires: number;
  private readonly heartbeat: number;

  constructor(
    private readonly link: NatsLink,
    /** The stream and consumer names to pull from (`retarget` changes the consumer). */
    readonly stream: string,
    public consumer: string,
    private readonly handler: PullHandler,
    opts: PullOptions = {},
  ) {
    this.size = Math.max(1, Math.min(opts.batch ?? 1024, handler.maxBatch));
    this.expires = Math.max(1000, opts.expires ?? 30_000);
    this.heartbeat = Math.max(100, Math.min(opts.heartbeat ?? 5000, this.expires / 2));
    this.inbox = `_INBOX.floe.${crypto.randomUUID().replaceAll("-", "")}`;
  }

  /** Pulls from consumer `name` from now on (a recreated ephemeral consumer). */
  retarget(name: string): void {
    this.consumer = name;
    this.outstanding = 0;
  }

  /** Subscribes the inbox and issues the first pull (after the connection is up). */
  async start(): Promise<void> {
    const nc = await this.link.ready;
    if (this.stopped) return;
    this.nc = nc;
    this.sub = nc.subscribe(this.inbox, { callback: (err, m) => (err ? this.fail(err.message) : this.onMsg(m)) });
    this.unReconnect = this.link.onReconnect(() => {
      // The pull died with the old connection.
      this.outstanding = 0;
      this.pull();
    });
    this.watchdog = setInterval(() => this.check(), this.heartbeat);
    this.pull();
  }

  private fail(message: string): void {
    this.handler.error?.(message);
  }

  /** Two heartbeats without a word while a pull is outstanding: the pull is lost (server restart, leader change). */
  private check(): void {
    if (this.stopped || this.outstanding === 0 || this.waiting) return;
    if (Date.now() - this.lastSeen > 2 * this.heartbeat + 500) {
      this.outstanding = 0;
      this.pull();
    }
  }

  private pull(): void {
    const nc = this.nc;
    if (this.stopped || this.recovering || !nc || nc.isClosed() || this.outstanding > 0 || this.waiting || this.batch.length > 0) return;
    const n = this.size;
    const req = JSON.stringify({ batch: n, expires: this.expires * NS, idle_heartbeat: this.heartbeat * NS });
    try {
      nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${this.stream}.${this.consumer}`, req, { reply: this.inbox });
    } catch (e) {
      // Disconnected: the reconnect listener pulls again.
      this.fail(`pull from ${this.stream}/${this.consumer} failed: ${(e as Error).message}`);
      return;
    }
    this.outstanding = n;
    this.lastSeen = Date.now();
  }

  private onMsg(m: Msg): void {
    if (this.stopped) return;
    this.lastSeen = Date.now();
    const h = m.headers;
    if (h && !m.reply && h.code > 0) {
      this.status(h.code, h.description);
      return;
    }
    const d = parseDelivery(m);
    if (!d) return;
    if (this.batch.length === 0) this.batchAt = this.lastSeen;
    this.batch.push(d);
    if (this.outstanding > 0) this.outstanding--;
    // Everything one socket read brings is one batch: the client calls back synchronously per message.
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flush);
    }
  }

  /** Status messages of a pull: 100 heartbeat, 404/408 no (more) messages, 409 the request ended early. */
  private status(code: number, description: string): void {
    if (code === 100) return;
    if (code === 404 || code === 408) {
      this.outstanding = 0;
      if (this.batch.length === 0) this.pull();
      return;
    }
    if (code === 503 || (code === 409 && /Consumer (Deleted|not found)/i.test(description))) {
      // The consumer is gone (deleted, or an ephemeral one lost with the server's state).
      this.outstanding = 0;
      if (this.recovering) return;
      if (!this.handler.lost) {
        this.fail(`pull from ${this.stream}/${this.consumer}: ${code} ${description}`);
        setTimeout(() => this.pull(), 1000);
        return;
      }
      this.recovering = true;
      this.handler.lost().then(
        () => {
          this.recovering = false;
          this.pull();
        },
        (e: unknown) => {
          this.recovering = false;
          this.fail(`consumer ${this.stream}/${this.consumer} lost and not recreated: ${(e as Error).message}`);
          setTimeout(() => this.pull(), 1000);
        },
      );
      return;
    }
    if (code === 409) {
      this.outstanding = 0;
      // "Exceeded MaxWaiting", "Leadership Change", "Consumer Deleted", …: pull again shortly.
      if (!/Exceeded Max/i.test(description)) this.fail(`pull from ${this.stream}/${this.consumer}: ${code} ${description}`);
      setTimeout(() => this.pull(), 100);
      return;
    }
    this.outstanding = 0;
    this.fail(`pull from ${this.stream}/${this.consumer}: ${code} ${description}`);
    setTimeout(() => this.pull(), 1000);
  }

  private readonly flush = (): void => {
    this.flushQueued = false;
    if (this.stopped || this.batch.length === 0) return;
    if (!this.handler.deliver(this.batch, this.batchAt)) {
      if (this.waiting) return;
      this.waiting = true;
      this.handler.onDrain(() => {
        this.waiting = false;
        this.flush();
      });
      return;
    }
    this.batch = [];
    if (this.outstanding === 0) this.pull();
  };

  private send(reply: string, body: Uint8Array): void {
    const nc = this.nc;
    if (!nc || nc.isClosed()) return;
    try {
      nc.publish(reply, body);
    } catch {
      // Disconnected: the server redelivers after ackWait, and the reader counts a duplicate.
    }
  }

  /** Acknowledges one delivery (with `ackPolicy: all`, every earlier one too). */
  ack(d: JsDelivery | string): void {
    this.send(typeof d === "string" ? d : d.reply, ACK);
  }

  /** Asks the server to redeliver, after `delayMs` when given. */
  nak(d: JsDelivery | string, delayMs = 0): void {
    const body = delayMs > 0 ? `-NAK ${JSON.stringify({ delay: delayMs * NS })}` : "-NAK";
    this.send(typeof d === "string" ? d : d.reply, new TextEncoder().encode(body));
  }

  /** Resets the delivery's ackWait timer (still being worked on). */
  working(d: JsDelivery | string): void {
    this.send(typeof d === "string" ? d : d.reply, WPI);
  }

  /** Never redeliver this message. */
  term(d: JsDelivery | string): void {
    this.send(typeof d === "string" ? d : d.reply, TERM);
  }

  /** Resolves when the server has received every acknowledgement sent so far. */
  async flushAcks(): Promise<void> {
    const nc = this.nc;
    if (nc && !nc.isClosed()) await nc.flush();
  }

  /**
   * Stops pulling and unsubscribes. The batch the handler has not admitted is given back (NAK:
   * redelivered at once); other unacknowledged deliveries come back after ackWait unless the
   * caller NAKs them.
   */
  stop(): void {
    if (this.stopped) return;
    for (const d of this.batch) this.nak(d);
    this.stopped = true;
    clearInterval(this.watchdog);
    this.unReconnect();
    this.batch = [];
    try {
      this.sub?.unsubscribe();
    } catch {
      // already closed with the connection
    }
  }
}
