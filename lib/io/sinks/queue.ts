/**
 * A sink's input queue. Without the cache: a bounded ring whose capacity (`bufferLength`, default
 * 10,000) is the admission limit the rule respects, so a slow sink pushes back on the rule; a
 * small headroom absorbs timer-driven window emissions, and past it the oldest item is dropped
 * and counted. With `enableCache` (rules-and-sinks.md §3.4): memory up to
 * `memoryCacheThreshold`, then disk pages of `bufferPageSize` items, at most
 * `max(2, maxDiskCache / bufferPageSize)` pages, then the oldest page is dropped and counted.
 * Order is preserved across the tiers, and unsent items are saved at stop for the next run.
 */
import { DateTime } from "../../value/values.ts";
import { formatRfc3339Nano } from "../../value/time.ts";
import { Ring } from "../../core/ring.ts";
import type { SinkCacheStore } from "../../store/sink-cache.ts";
import type { CacheConf } from "./common.ts";
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

export function encodePage(items: readonly SinkItem[]): string {
  return JSON.stringify(
    items.map((i) => (i.source ? [i.payload, i.props, i.rows, i.source.outs, i.source.batched] : [i.payload, i.props, i.rows])),
    replacer,
  );
}

type PageRow = [SinkItem["payload"], SinkItem["props"], number, SinkSource["outs"]?, boolean?];

export function decodePage(data: string): SinkItem[] {
  const rows = JSON.parse(data, reviver) as PageRow[];
  return rows.map(([p, props, n, outs, batched]) => new SinkItem(p, props, n, outs ? new SinkSource(outs, !!batched) : null));
}

export class CachedQueue implements SinkQueue {
  private readonly mem: Ring<SinkItem>;
  private readPage: SinkItem[] = [];
  private readPos = 0;
  private writePage: SinkItem[] = [];
  private readonly maxPages: number;
  dropped = 0;

  constructor(
    private readonly conf: CacheConf,
    private readonly store: SinkCacheStore,
    private readonly onDrop: (n: number) => void,
  ) {
    this.mem = new Ring(Math.max(1, conf.memoryCacheThreshold));
    this.maxPages = Math.max(2, Math.floor(conf.maxDiskCache / conf.bufferPageSize));
  }

  get length(): number {
    return this.mem.length + (this.readPage.length - this.readPos) + this.store.items + this.writePage.length;
  }
  get memLength(): number {
    return this.mem.length;
  }
  /** Items in the disk tier (pages on disk and the page being filled). */
  get diskLength(): number {
    return this.store.items + this.writePage.length + (this.readPage.length - this.readPos);
  }

  room(): number {
    // The cache never pushes back: it spills, then drops the oldest page.
    return Infinity;
  }

  push(item: SinkItem): void {
    if (this.store.pages === 0 && this.readPos >= this.readPage.length && this.writePage.length === 0 && this.mem.push(item)) return;
    this.writePage.push(item);
    if (this.writePage.length >= this.conf.bufferPageSize) this.spill();
  }

  private spill(): void {
    if (this.store.pages >= this.maxPages) {
      const old = this.store.shift();
      if (old) {
        this.dropped += old.n;
        this.onDrop(old.n);
      }
    }
    this.store.append(this.writePage.length, encodePage(this.writePage));
    this.writePage = [];
  }

  peek(): SinkItem | undefined {
    if (this.mem.length === 0) this.refill();
    return this.mem.peek();
  }

  shift(): void {
    this.mem.shift();
    this.refill();
  }

  /** Moves the oldest cached items into memory while it has room: read page, disk, write page. */
  private refill(): void {
    while (this.mem.free > 0) {
      if (this.readPos < this.readPage.length) {
        this.mem.push(this.readPage[this.readPos]!);
        this.readPage[this.readPos++] = undefined as unknown as SinkItem;
        continue;
      }
      if (this.store.pages > 0) {
        const p = this.store.shift()!;
        this.readPage = decodePage(p.data);
        this.readPos = 0;
        continue;
      }
      if (this.writePage.length > 0) {
        const k = Math.min(this.mem.free, this.writePage.length);
        for (let i = 0; i < k; i++) this.mem.push(this.writePage[i]!);
        this.writePage.splice(0, k);
        continue;
      }
      return;
    }
  }

  stop(clean: boolean): void {
    if (clean) {
      this.store.clear();
    } else {
      // Memory and the read page are older than the disk pages; the write page is newer.
      const older = [...this.mem.toArray(), ...this.readPage.slice(this.readPos)];
      const pages: { n: number; data: string }[] = [];
      for (let i = 0; i < older.length; i += this.conf.bufferPageSize) {
        const chunk = older.slice(i, i + this.conf.bufferPageSize);
        pages.push({ n: chunk.length, data: encodePage(chunk) });
      }
      this.store.prepend(pages);
      if (this.writePage.length) this.store.append(this.writePage.length, encodePage(this.writePage));
    }
    this.mem.clear();
    this.readPage = [];
    this.readPos = 0;
    this.writePage = [];
  }
}
