/**
 * A sink's input queue. Without the cache: a bounded ring whose capacity (`bufferLength`, default
 * 10,000) is the admission limit the rule respects, so a slow sink pushes back on the rule; a
 * small headroom absorbs timer-driven window emissions, and past it the oldest item is dropped
 * and counted. With `enableCache` the queue is a `CachedQueue` (cached-queue.ts). This file also
 * holds the page codec of the cache's disk pages.
 */
import { DateTime } from "../value/values.ts";
import { formatRfc3339Nano } from "../value/time.ts";
import { Ring } from "../core/ring.ts";
import { SinkItem, SinkSource } from "./connector.ts";

export interface SinkQueue {
  /** Items waiting, all tiers. */
  readonly length: number;
  /** Items held in memory (the `buffer_length` metric). */
  readonly memLength: number;
  /** Items evicted so far. */
  readonly dropped: number;
  /** How many items the producer may still add before it should wait. */
  room(): number;
  push(item: SinkItem): void;
  peek(): SinkItem | undefined;
  shift(): void;
  /** At stop: keep unsent items for the next run (cache), or discard them. */
  stop(clean: boolean): void;
  /** Makes every queued item durable now (the cache's write-through; a no-op in memory). */
  flush(): void;
  /** Every queued item is on disk (the cache, flushed). */
  readonly writtenThrough: boolean;
  /** A lower bound of the oldest queued item's tag (SinkItem.tag), Infinity when empty; reads nothing from disk. */
  headTag(): number;
}

/** Extra slots beyond the admission limit for emissions the rule cannot hold back (window timers). */
const HEADROOM = 1024;

export class MemoryQueue implements SinkQueue {
  private readonly ring: Ring<SinkItem>;
  dropped = 0;
  constructor(
    private readonly capacity: number,
    private readonly onDrop: (n: number) => void,
  ) {
    this.ring = new Ring(capacity + HEADROOM);
  }
  get length(): number {
    return this.ring.length;
  }
  get memLength(): number {
    return this.ring.length;
  }
  room(): number {
    return this.capacity - this.ring.length;
  }
  push(item: SinkItem): void {
    if (!this.ring.push(item)) {
      this.ring.shift();
      this.dropped++;
      this.onDrop(1);
      this.ring.push(item);
    }
  }
  peek(): SinkItem | undefined {
    return this.ring.peek();
  }
  shift(): void {
    this.ring.shift();
  }
  stop(): void {
    this.ring.clear();
  }
  flush(): void {}
  get writtenThrough(): boolean {
    return false;
  }
  headTag(): number {
    const h = this.ring.peek();
    return h === undefined ? Infinity : h.tag;
  }
}

// ---------------------------------------------------------------------------------------------
// Page codec: JSON with tagged int64, bytes and datetimes (values keep their types across runs).

const INT = "\u0000i";
const BYTES = "\u0000b";

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const orig = this[key];
  if (typeof orig === "bigint") return { [INT]: orig.toString() };
  if (orig instanceof Uint8Array) return { [BYTES]: Buffer.from(orig.buffer, orig.byteOffset, orig.byteLength).toString("base64") };
  if (orig instanceof DateTime) return formatRfc3339Nano(orig);
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    if (typeof o[INT] === "string") return BigInt(o[INT]);
    if (typeof o[BYTES] === "string") return new Uint8Array(Buffer.from(o[BYTES], "base64"));
  }
  return value;
}

/**
 * Encodes items as page text: one JSON line per item, each ending in a newline, so a page grows
 * by appending the text of its new items.
 */
export function encodePage(items: readonly SinkItem[]): string {
  let out = "";
  for (const i of items) {
    const p = i.payload;
    // The common item (encoded bytes or text, static props, nothing kept for a resend) is
    // written without the replacer, which costs more than the rest of the journal together.
    if (i.source === null && (i.props === null || !hasTagged(i.props))) {
      if (p instanceof Uint8Array) out += `[{"\\u0000b":"${base64(p)}"},`;
      else if (typeof p === "string") out += "[" + JSON.stringify(p) + ",";
      else {
        out += JSON.stringify(i.key ? [p, i.props, i.rows, null, false, i.key] : [p, i.props, i.rows], replacer) + "\n";
        continue;
      }
      out += (i.props === null ? "null" : JSON.stringify(i.props)) + "," + i.rows + (i.key ? `,null,false,${JSON.stringify(i.key)}]\n` : "]\n");
      continue;
    }
    const row: unknown[] = [p, i.props, i.rows];
    if (i.source) row.push(i.source.outs, i.source.batched);
    else if (i.key) row.push(null, false);
    if (i.key) row.push(i.key);
    out += JSON.stringify(row, replacer) + "\n";
  }
  return out;
}

type WithBase64 = Uint8Array & { toBase64?: () => string };

/** Base64 of bytes: the engine's native encoder where it has one (twice Buffer's speed in Bun). */
function base64(b: WithBase64): string {
  return b.toBase64 ? b.toBase64() : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");
}

/** Whether rendered props hold a value the plain JSON encoding would change (int64, bytes, time). */
function hasTagged(v: unknown): boolean {
  if (typeof v === "bigint" || v instanceof Uint8Array || v instanceof DateTime) return true;
  if (Array.isArray(v)) {
    for (const x of v) if (hasTagged(x)) return true;
    return false;
  }
  if (v !== null && typeof v === "object") {
    for (const k in v) if (hasTagged((v as Record<string, unknown>)[k])) return true;
  }
  return false;
}

/** An item in a page: payload, props, rows, then what a resend re-encodes (or null, false) and the item's key, when kept. */
type PageRow = [SinkItem["payload"], SinkItem["props"], number, (SinkSource["outs"] | null)?, boolean?, string?];

function decodeRow([p, props, n, outs, batched, key]: PageRow): SinkItem {
  return new SinkItem(p, props, n, outs ? new SinkSource(outs, !!batched) : null, null, key ?? "");
}

/** Decodes page text (`encodePage`), or a page of an older floe: one JSON array of items. */
export function decodePage(data: string): SinkItem[] {
  const out: SinkItem[] = [];
  if (!data.endsWith("\n")) {
    for (const r of JSON.parse(data, reviver) as PageRow[]) out.push(decodeRow(r));
    return out;
  }
  let at = 0;
  for (let nl = data.indexOf("\n"); nl >= 0; nl = data.indexOf("\n", at)) {
    out.push(decodeRow(JSON.parse(data.slice(at, nl), reviver) as PageRow));
    at = nl + 1;
  }
  return out;
}
