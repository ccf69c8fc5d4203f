/**
 * The lean MQTT read path (bench.md, last section): splits what one socket read delivered into
 * frames, decodes QoS 0/1 PUBLISH frames in a tight loop (topic, packet id, v5 user properties,
 * payload as a view of the read buffer) into reused `Publish` objects, and hands every other frame
 * back untouched for MQTT.js.
 * PUBACKs for a whole batch are built into one buffer.
 */
import type { Obj } from "../../value/values.ts";

export class Publish {
  topic: string;
  payload: Uint8Array;
  qos: number;
  id: number;
  dup: boolean;
  retain: boolean;
  /** v5 user properties, or null. */
  userProps: Obj | null;
  constructor(topic: string, payload: Uint8Array, qos: number, id: number, dup: boolean, retain: boolean, userProps: Obj | null) {
    this.topic = topic;
    this.payload = payload;
    this.qos = qos;
    this.id = id;
    this.dup = dup;
    this.retain = retain;
    this.userProps = userProps;
  }
}

const NO_PAYLOAD = new Uint8Array(0);
/** The most a split frame's buffer takes before more of the frame has arrived. */
const FIRST_CARRY = 64 * 1024;

/**
 * The publishes read and not yet admitted, in objects reused from read to read: a handler reads a
 * publish while admitting it and keeps none of them (it may keep the payload: a view of its own).
 */
export class Publishes {
  readonly items: Publish[] = [];
  length = 0;

  add(topic: string, payload: Uint8Array, qos: number, id: number, dup: boolean, retain: boolean, userProps: Obj | null): void {
    const p = this.items[this.length++];
    if (p === undefined) {
      this.items.push(new Publish(topic, payload, qos, id, dup, retain, userProps));
      return;
    }
    p.topic = topic;
    p.payload = payload;
    p.qos = qos;
    p.id = id;
    p.dup = dup;
    p.retain = retain;
    p.userProps = userProps;
  }

  /** Empties the list, dropping the payloads and properties so that no read's buffer stays held. */
  clear(): void {
    for (let i = 0; i < this.length; i++) {
      const p = this.items[i]!;
      p.payload = NO_PAYLOAD;
      p.userProps = null;
    }
    this.length = 0;
  }
}

/**
 * Splits a stream into frames without copying whole reads: frames inside a read are parsed where
 * they lie (a read's buffer is the socket's own, never reused, so payload views of it may outlive
 * the read), and only a frame split across reads is copied, once, into a buffer of its own size.
 */
export class FrameReader {
  /** The first bytes of a frame split inside its fixed header (≤ 5); reused, as nothing views it. */
  private readonly head = Buffer.alloc(5);
  private headLen = 0;
  /**
   * A frame split after its fixed header, filled up to `filled`; its body starts at `bodyAt`. It
   * grows with what arrives (doubling, up to the frame's `size`) rather than taking the size the
   * header declares at once: a header alone claims up to 256 MB.
   */
  private frame: Buffer | null = null;
  private size = 0;
  private filled = 0;
  private bodyAt = 0;
  /** A remaining length longer than 4 bytes was seen: the stream cannot be framed, MQTT.js gets all of it (and reports it). */
  private broken = false;
  private readonly aliases = new Map<number, string>();
  constructor(private readonly v5: boolean) {}

  /**
   * Consumes `chunk`: QoS 0/1 PUBLISH frames are added to `pubs`; all other frames (CONNACK,
   * SUBACK, PINGRESP, QoS 2 PUBLISH, …) are returned as one buffer for MQTT.js, or null.
   */
  read(chunk: Buffer, pubs: Publishes): Buffer | null {
    if (this.broken) return chunk;
    const n = chunk.length;
    let others: Buffer[] | null = null;
    let i = 0;
    if (this.headLen > 0 || this.frame !== null) {
      i = this.resume(chunk);
      if (this.broken) {
        const out = Buffer.concat([this.head.subarray(0, this.headLen), chunk.subarray(i)]);
        this.headLen = 0;
        return out;
      }
      const f = this.frame;
      if (f === null || this.filled < this.size) return null;
      this.frame = null;
      const b0 = f[0]!;
      const qos = (b0 >> 1) & 3;
      if (b0 >> 4 === 3 && qos < 2) this.publish(f, b0, qos, this.bodyAt, f.length, pubs);
      else others = [f];
    }
    let otherStart = -1;
    while (i < n) {
      const b0 = chunk[i]!;
      // Remaining length: 1–4 bytes, 7 bits each.
      let len = 0;
      let mul = 1;
      let j = i + 1;
      let k = 0;
      let done = false;
      for (; k < 4 && j < n; k++) {
        const b = chunk[j++]!;
        len += (b & 127) * mul;
        mul *= 128;
        if ((b & 128) === 0) {
          done = true;
          break;
        }
      }
      if (!done && k === 4) {
        this.broken = true;
        if (otherStart < 0) otherStart = i;
        i = n;
        break;
      }
      if (!done || j + len > n) {
        this.carry(chunk, i, j, done ? j - i + len : 0);
        break;
      }
      const end = j + len;
      const qos = (b0 >> 1) & 3;
      if (b0 >> 4 === 3 && qos < 2) {
        if (otherStart >= 0) {
          (others ??= []).push(chunk.subarray(otherStart, i));
          otherStart = -1;
        }
        this.publish(chunk, b0, qos, j, end, pubs);
      } else if (otherStart < 0) otherStart = i;
      i = end;
    }
    if (otherStart >= 0) (others ??= []).push(chunk.subarray(otherStart, i));
    if (!others) return null;
    return others.length === 1 ? others[0]! : Buffer.concat(others);
  }

  /** Keeps the incomplete frame at `chunk[i..)`: its whole size `size` when its header `chunk[i..j)` is complete, else 0. */
  private carry(chunk: Buffer, i: number, j: number, size: number): void {
    if (size === 0) {
      chunk.copy(this.head, 0, i, j);
      this.headLen = j - i;
      return;
    }
    this.size = size;
    this.frame = Buffer.allocUnsafe(Math.min(size, Math.max(FIRST_CARRY, 2 * (chunk.length - i))));
    this.filled = chunk.copy(this.frame, 0, i);
    this.bodyAt = j - i;
  }

  /** Continues the frame the previous read left with the start of `chunk`; returns where the chunk's next frame starts. */
  private resume(chunk: Buffer): number {
    let i = 0;
    if (this.frame === null) {
      const head = this.head;
      for (;;) {
        if (i === chunk.length) return i;
        const b = chunk[i++]!;
        head[this.headLen++] = b;
        if (this.headLen >= 2 && (b & 128) === 0) break;
        if (this.headLen === 5) {
          this.broken = true;
          return i;
        }
      }
      let len = 0;
      for (let k = this.headLen - 1; k >= 1; k--) len = len * 128 + (head[k]! & 127);
      this.size = this.headLen + len;
      this.frame = Buffer.allocUnsafe(Math.min(this.size, FIRST_CARRY));
      this.filled = head.copy(this.frame, 0, 0, this.headLen);
      this.bodyAt = this.headLen;
      this.headLen = 0;
    }
    let f = this.frame;
    const take = Math.min(this.size - this.filled, chunk.length - i);
    if (this.filled + take > f.length) {
      // Capacity reaches `size` exactly when the frame is complete (growth stops at it).
      const grown = Buffer.allocUnsafe(Math.min(this.size, Math.max(2 * f.length, this.filled + take)));
      f.copy(grown, 0, 0, this.filled);
      this.frame = f = grown;
    }
    chunk.copy(f, this.filled, i, i + take);
    this.filled += take;
    return i + take;
  }

  private readonly topics = new TopicCache();

  private publish(buf: Buffer, b0: number, qos: number, p: number, end: number, pubs: Publishes): void {
    const tlen = (buf[p]! << 8) | buf[p + 1]!;
    let topic = this.topics.get(buf, p + 2, p + 2 + tlen);
    p += 2 + tlen;
    let id = 0;
    if (qos > 0) {
      id = (buf[p]! << 8) | buf[p + 1]!;
      p += 2;
    }
    let userProps: Obj | null = null;
    if (this.v5) {
      let plen = 0;
      let mul = 1;
      for (;;) {
        const b = buf[p++]!;
        plen += (b & 127) * mul;
        mul *= 128;
        if ((b & 128) === 0) break;
      }
      const pend = p + plen;
      let alias = 0;
      while (p < pend) {
        const idp = buf[p++]!;
        switch (idp) {
          case 0x01: // payload format indicator
            p += 1;
            break;
          case 0x02: // message expiry
            p += 4;
            break;
          case 0x23: // topic alias
            alias = (buf[p]! << 8) | buf[p + 1]!;
            p += 2;
            break;
          case 0x08: // response topic
          case 0x03: // content type
          case 0x09: // correlation data
            p += 2 + ((buf[p]! << 8) | buf[p + 1]!);
            break;
          case 0x0b: // subscription identifier (varint)
            while (buf[p++]! & 128);
            break;
          case 0x26: {
            const kl = (buf[p]! << 8) | buf[p + 1]!;
            const k = buf.toString("utf8", p + 2, p + 2 + kl);
            p += 2 + kl;
            const vl = (buf[p]! << 8) | buf[p + 1]!;
            const v = buf.toString("utf8", p + 2, p + 2 + vl);
            p += 2 + vl;
            (userProps ??= {})[k] = v;
            break;
          }
          default:
            p = pend;
        }
      }
      p = pend;
      if (alias) {
        if (tlen > 0) this.aliases.set(alias, topic);
        else topic = this.aliases.get(alias) ?? "";
      }
    }
    pubs.add(topic, buf.subarray(p, end), qos, id, (b0 & 8) !== 0, (b0 & 1) !== 0, userProps);
  }
}

/** PUBACK frames for the QoS 1 publishes of `pubs[from..to)`, as one buffer (null when none). */
export function pubacks(pubs: readonly Publish[], from: number, to: number): Buffer | null {
  let count = 0;
  for (let i = from; i < to; i++) if (pubs[i]!.qos === 1) count++;
  if (count === 0) return null;
  const out = Buffer.allocUnsafe(count * 4);
  let o = 0;
  for (let i = from; i < to; i++) {
    const p = pubs[i]!;
    if (p.qos !== 1) continue;
    out[o] = 0x40;
    out[o + 1] = 2;
    out[o + 2] = p.id >> 8;
    out[o + 3] = p.id & 255;
    o += 4;
  }
  return out;
}

/**
 * Topic bytes → string without decoding the (usually repeating) topic of every message: an
 * open-addressed table keyed by an FNV-1a hash of the bytes, verified on a hit. It grows to hold
 * every topic of a stream (W3: 10,000 devices, one topic each, round-robin; a direct-mapped 4,096
 * slots missed on every message there) and starts over when MAX_TOPICS are held. An ASCII topic
 * is verified against its string's characters (equal lengths and equal codes prove the bytes were
 * ASCII); any other keeps a copy of its bytes.
 */
export class TopicCache {
  private static readonly MAX_TOPICS = 32768;
  private mask = 1023;
  private count = 0;
  private hashes = new Int32Array(1024);
  private values: (string | undefined)[] = new Array(1024);
  /** The bytes of a non-ASCII topic (null for ASCII ones). */
  private bytes: (Uint8Array | null)[] = new Array(1024);

  get(buf: Buffer, start: number, end: number): string {
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    const len = end - start;
    let slot = h & this.mask;
    for (let v = this.values[slot]; v !== undefined; v = this.values[slot]) {
      if (this.hashes[slot] === h && this.same(slot, v, buf, start, len)) return v;
      slot = (slot + 1) & this.mask;
    }
    const topic = buf.toString("utf8", start, end);
    if (this.count >= TopicCache.MAX_TOPICS || (this.count + 1) * 2 > this.mask + 1) {
      if (this.count >= TopicCache.MAX_TOPICS) this.reset(this.mask + 1);
      else this.grow();
      slot = h & this.mask;
      while (this.values[slot] !== undefined) slot = (slot + 1) & this.mask;
    }
    this.count++;
    this.hashes[slot] = h;
    this.values[slot] = topic;
    // A copy of the bytes (the read buffer is reused) only where the characters cannot stand for them.
    this.bytes[slot] = topic.length === len && isAscii(topic) ? null : new Uint8Array(buf.subarray(start, end));
    return topic;
  }

  private same(slot: number, v: string, buf: Buffer, start: number, len: number): boolean {
    const b = this.bytes[slot];
    if (b === null) {
      if (v.length !== len) return false;
      for (let i = 0; i < len; i++) if (v.charCodeAt(i) !== buf[start + i]) return false;
      return true;
    }
    if (b === undefined || b.length !== len) return false;
    for (let i = 0; i < len; i++) if (b[i] !== buf[start + i]) return false;
    return true;
  }

  private reset(size: number): void {
    this.mask = size - 1;
    this.count = 0;
    this.hashes = new Int32Array(size);
    this.values = new Array(size);
    this.bytes = new Array(size);
  }

  private grow(): void {
    const { hashes, values, bytes } = this;
    this.reset(hashes.length * 2);
    let n = 0;
    for (let i = 0; i < hashes.length; i++) {
      const v = values[i];
      if (v === undefined) continue;
      let slot = hashes[i]! & this.mask;
      while (this.values[slot] !== undefined) slot = (slot + 1) & this.mask;
      this.hashes[slot] = hashes[i]!;
      this.values[slot] = v;
      this.bytes[slot] = bytes[i]!;
      n++;
    }
    this.count = n;
  }
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return false;
  return true;
}
