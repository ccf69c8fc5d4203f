/**
 * QoS 0 PUBLISH frames written by the MQTT sink itself rather than through MQTT.js's `publish`:
 * each frame is encoded straight into one scratch buffer, and the frames of a turn reach the
 * socket in one write, a microtask after the first (or at once when the scratch is full). MQTT.js
 * builds a packet object, logs through `debug` and writes five chunks per message into a corked
 * stream; at sink rates that garbage drove the collector, whose concurrent cycles, on the one CPU
 * the engine has, held its event loop off the input socket for tens of milliseconds
 * (bench/notes.md, "Publish → sink latency").
 */
import type { Writable } from "node:stream";

/** Bytes gathered before a write: a turn's frames, bounded so that back-pressure is felt per 64 KiB. */
const SCRATCH = 64 * 1024;
/** MQTT's largest remaining length (four bytes of variable-length integer). */
const MAX_REMAINING = 268_435_455;

function varintSize(n: number): number {
  return n < 128 ? 1 : n < 16_384 ? 2 : n < 2_097_152 ? 3 : 4;
}

export class PublishFrames {
  private buf = Buffer.allocUnsafe(SCRATCH);
  private len = 0;
  /** The stream the gathered frames go to (a reconnect brings another). */
  private target: Writable | null = null;
  private scheduled = false;
  private topic = "";
  private topicBytes: Buffer = Buffer.alloc(0);

  /** `v5`: an MQTT 5 frame carries a property length (0: these frames have none). */
  constructor(private readonly v5: boolean) {}

  /** Queues one PUBLISH (QoS 0, not dup) for `s`; written with the turn's others (see the header). */
  add(s: Writable, topic: string, payload: string | Uint8Array, retain: boolean): void {
    if (this.target !== s) {
      this.flush();
      this.target = s;
    }
    if (topic !== this.topic) {
      this.topic = topic;
      this.topicBytes = Buffer.from(topic, "utf8");
    }
    const tb = this.topicBytes;
    const text = typeof payload === "string";
    const plen = text ? Buffer.byteLength(payload, "utf8") : payload.length;
    const rem = 2 + tb.length + (this.v5 ? 1 : 0) + plen;
    if (rem > MAX_REMAINING) throw new Error(`mqtt publish of ${plen} bytes exceeds the protocol's packet size`);
    const size = 1 + varintSize(rem) + rem;
    if (this.len + size > this.buf.length) {
      this.flush();
      // One frame larger than the scratch is written on its own.
      if (size > this.buf.length) {
        const big = Buffer.allocUnsafe(size);
        this.encode(big, 0, tb, payload, text, rem, retain);
        this.write(big);
        return;
      }
    }
    this.len = this.encode(this.buf, this.len, tb, payload, text, rem, retain);
    if (this.len >= SCRATCH) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.flushTask);
    }
  }

  private encode(b: Buffer, at: number, tb: Buffer, payload: string | Uint8Array, text: boolean, rem: number, retain: boolean): number {
    let o = at;
    b[o++] = retain ? 0x31 : 0x30;
    let n = rem;
    do {
      let x = n & 127;
      n >>>= 7;
      if (n > 0) x |= 128;
      b[o++] = x;
    } while (n > 0);
    b[o++] = tb.length >> 8;
    b[o++] = tb.length & 255;
    o += tb.copy(b, o);
    if (this.v5) b[o++] = 0;
    if (text) o += b.write(payload as string, o, "utf8");
    else {
      b.set(payload as Uint8Array, o);
      o += (payload as Uint8Array).length;
    }
    return o;
  }

  private readonly flushTask = (): void => {
    this.scheduled = false;
    this.flush();
  };

  /** Writes what is gathered now (before a write that must come after it, and at close). */
  flush(): void {
    if (this.len === 0) return;
    // The stream may keep the bytes until it drains: it gets its own copy, the scratch is reused.
    const out = Buffer.from(this.buf.subarray(0, this.len));
    this.len = 0;
    this.write(out);
  }

  private write(b: Buffer): void {
    const s = this.target;
    // A stream closed meanwhile loses them, as QoS 0 bytes written to a dying socket are lost.
    if (s && !s.destroyed && s.writable) s.write(b);
  }
}
