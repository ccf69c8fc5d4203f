/**
 * The transport under MQTT.js for a source on the lean read path: a `Bun.connect` socket (TCP or
 * TLS) seen by MQTT.js as a Duplex. Each read's QoS 0/1 PUBLISH frames are decoded (frames.ts) and
 * admitted to the handler in batches, PUBACKs written once per batch; every other frame is pushed
 * to MQTT.js. The socket is paused while the handler pushes back, and for a moment after a read
 * when messages arrive fast and the reads' work keeps the loop busy (read coalescing,
 * read-coalescing.ts): `pause` on this socket stops reading the kernel, so the next read brings
 * what arrived meanwhile — many messages for one read, one `data` call and one pump — while a lone
 * message after a quiet spell, or any message while the engine has time to spare, is read at once.
 */
import { constants } from "node:crypto";
import { Duplex } from "node:stream";
import type { Socket, SocketHandler, TLSOptions } from "bun";
import { openSocket } from "../../net/brokers.ts";
import type { MqttConf } from "./conf.ts";
import { FrameReader, Publishes, pubacks, type Publish } from "./frames.ts";
import { COALESCE_MS, ReadCoalescing } from "./read-coalescing.ts";

/** Where a source's publishes go: the bus, with reserve-then-commit admission. */
export interface PublishHandler {
  /** Admits `pubs[from..to)` as one batch; false when refused (nothing admitted). The `Publish` objects are reused after the call: keep none (a payload may be kept). */
  admit(pubs: readonly Publish[], from: number, to: number): boolean;
  /** Calls `fn` once when a refused batch may fit. */
  onDrain(fn: () => void): void;
  /** The largest batch `admit` takes. */
  readonly maxBatch: number;
  /** Redelivered (DUP) publishes were admitted. */
  duplicates?(n: number): void;
}

/** Where admitted duplicates are counted (the connection). */
export interface DuplicateCounter {
  duplicates: number;
}

const MAX_BATCH = 1024;

type Sock = Socket<LeanStream>;

const HANDLERS: SocketHandler<LeanStream> = {
  open(s) {
    s.data.opened(s);
  },
  data(s, chunk) {
    s.data.onData(chunk);
  },
  // A refused certificate closes the socket without an error: report it as node:tls does.
  handshake(s, ok, err) {
    if (!ok) s.data.destroy(err ?? new Error("TLS handshake failed"));
  },
  drain(s) {
    s.data.flush();
  },
  end(s) {
    s.data.push(null);
  },
  close(s, err) {
    if (!s.data.destroyed) s.data.destroy(err);
  },
  error(s, err) {
    s.data.destroy(err);
  },
  connectError(s, err) {
    s.data.destroy(err);
  },
};

const TLS_FLOOR: Record<string, number> = {
  TLSv1: 0,
  "TLSv1.1": constants.SSL_OP_NO_TLSv1,
  "TLSv1.2": constants.SSL_OP_NO_TLSv1 | constants.SSL_OP_NO_TLSv1_1,
  "TLSv1.3": constants.SSL_OP_NO_TLSv1 | constants.SSL_OP_NO_TLSv1_1 | constants.SSL_OP_NO_TLSv1_2,
};

function tlsOptions(conf: MqttConf): TLSOptions {
  const o = conf.options as MqttConf["options"] & { minVersion?: string };
  return {
    serverName: conf.host,
    rejectUnauthorized: o.rejectUnauthorized,
    ca: o.ca as TLSOptions["ca"],
    cert: o.cert as TLSOptions["cert"],
    key: o.key as TLSOptions["key"],
    secureOptions: TLS_FLOOR[o.minVersion ?? "TLSv1.2"],
  };
}

export class LeanStream extends Duplex {
  private sock: Sock | null = null;
  private readonly reader: FrameReader;
  private readonly pubs = new Publishes();
  private pos = 0;
  /** Refused by the handler: paused until it drains. */
  private waiting = false;
  /** In a coalescing pause. */
  private resting = false;
  private readonly coalescing = new ReadCoalescing();
  /** Ends the timing of a read's work: queued after the admission, it runs after the drains it woke. */
  private readonly worked = (): void => this.coalescing.worked(performance.now());
  /** The coalescing timer, created at the first pause and re-armed with `refresh` (a cleared one would not re-arm). */
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Bytes the kernel has not taken yet (before the connection opens, or after a short write), in order. */
  private pending: Buffer[] = [];
  private pendingCbs: ((e?: Error | null) => void)[] = [];
  private ending = false;

  constructor(
    conf: MqttConf,
    private readonly handler: PublishHandler,
    private readonly counter: DuplicateCounter,
  ) {
    super({ allowHalfOpen: false });
    this.reader = new FrameReader(conf.protocolVersion === 5);
    const opts = { hostname: conf.host, port: conf.port, data: this, socket: HANDLERS };
    // Failures arrive through `connectError`; the promise's rejection is the same failure.
    openSocket(conf.tls ? { ...opts, tls: tlsOptions(conf) } : opts).catch(() => undefined);
  }

  /** Called by the socket's `open` handler. */
  opened(s: Sock): void {
    if (this.destroyed) {
      s.terminate();
      return;
    }
    this.sock = s;
    s.setNoDelay(true);
    this.flush();
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.send(chunk, cb);
  }

  // One socket write per flush keeps every MQTT.js packet contiguous next to our PUBACKs.
  override _writev(chunks: { chunk: Buffer }[], cb: (e?: Error | null) => void): void {
    this.send(chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map((c) => c.chunk)), cb);
  }

  override _final(cb: (e?: Error | null) => void): void {
    this.ending = true;
    this.pendingCbs.push(cb);
    this.flush();
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    clearTimeout(this.timer);
    this.sock?.terminate();
    const cbs = this.pendingCbs;
    this.pending = [];
    this.pendingCbs = [];
    for (const f of cbs) f(err ?? new Error("connection closed"));
    cb(err);
  }

  /** Writes in order; `cb` runs once the kernel has the bytes (later on a short write: back-pressure for MQTT.js). */
  private send(buf: Buffer, cb?: (e?: Error | null) => void): void {
    if (this.sock && this.pending.length === 0) {
      const n = this.sock.write(buf);
      if (n >= buf.length) {
        cb?.();
        return;
      }
      buf = buf.subarray(Math.max(n, 0));
    }
    this.pending.push(buf);
    if (cb) this.pendingCbs.push(cb);
  }

  /** Writes what is pending (on open and on `drain`); then runs the waiting callbacks. */
  flush(): void {
    const s = this.sock;
    if (!s) return;
    const q = this.pending;
    let i = 0;
    for (; i < q.length; i++) {
      const b = q[i]!;
      const n = s.write(b);
      if (n < b.length) {
        q[i] = b.subarray(Math.max(n, 0));
        break;
      }
    }
    if (i > 0) q.splice(0, i);
    if (q.length) return;
    const cbs = this.pendingCbs;
    this.pendingCbs = [];
    if (this.ending) s.end();
    for (const f of cbs) f();
  }

  onData(chunk: Buffer): void {
    const now = performance.now();
    const before = this.pubs.length;
    const other = this.reader.read(chunk, this.pubs);
    if (other) this.push(other);
    const n = this.pubs.length - before;
    // Small reads of fast arrivals on a busy loop: let the next read gather what comes in the next moment.
    if (this.coalescing.read(n, now) && !this.resting && !this.destroyed) {
      this.resting = true;
      this.sock?.pause();
      if (this.timer) this.timer.refresh();
      else this.timer = setTimeout(() => this.rested(), COALESCE_MS);
    }
    if (!this.waiting) this.pump();
    if (n > 0) queueMicrotask(this.worked);
  }

  private rested(): void {
    this.resting = false;
    if (!this.waiting && !this.destroyed) this.sock?.resume();
  }

  private pump(): void {
    const h = this.handler;
    const pubs = this.pubs;
    const items = pubs.items;
    const max = Math.min(MAX_BATCH, h.maxBatch);
    while (this.pos < pubs.length) {
      const to = Math.min(pubs.length, this.pos + max);
      if (!h.admit(items, this.pos, to)) {
        this.waiting = true;
        this.sock?.pause();
        h.onDrain(() => {
          this.waiting = false;
          if (this.destroyed) return;
          if (!this.resting) this.sock?.resume();
          this.pump();
        });
        return;
      }
      let dups = 0;
      for (let i = this.pos; i < to; i++) if (items[i]!.dup) dups++;
      if (dups) {
        this.counter.duplicates += dups;
        h.duplicates?.(dups);
      }
      const acks = pubacks(items, this.pos, to);
      // Acknowledged after the rules drained the batch (their drains were queued by the admission,
      // so they run first): a cached sink has it on disk before the broker hears PUBACK.
      if (acks) queueMicrotask(() => this.destroyed || this.send(acks));
      this.pos = to;
    }
    pubs.clear();
    this.pos = 0;
  }
}
