/**
 * The sink cache (`enableCache`, rules-and-sinks.md §3.4) as a write-through journal: every item
 * queued is written to a disk page in `<data>/cache.db` before it counts as cached, and its page
 * is deleted only once every item of it was sent. Writes are batched: items queued in one tick
 * (one drain of the rule's inlet, one window emission) are written by one `flush` — one sqlite
 * transaction, one WAL append — so the cost is per batch, not per item. The rule's inlet flushes
 * at the end of each drain, before any source acknowledges the messages it drained; a microtask
 * flushes whatever else (timer emissions, resend takes). Pages sent whole are deleted by the next
 * flush, in the same transaction. A kill -9 of the process then loses nothing the queue held: the
 * next run lists the pages and resends them first. What was sent but whose page was not deleted
 * yet (the head page's sent part, pages sent in the last microseconds) is sent again: at least once.
 *
 * Tiers, as in eKuiper: items are held in memory (a read buffer) up to `memoryCacheThreshold`;
 * beyond it they live only on disk and are read back page by page, in order, as memory frees.
 * Pages hold up to `bufferPageSize` items; at most `max(2, maxDiskCache / bufferPageSize)` full
 * pages lie wholly beyond the memory tier: past that the oldest of them is deleted and its items
 * counted as dropped.
 */
import { Ring } from "../core/ring.ts";
import type { SinkCacheStore } from "../store/sink-cache.ts";
import type { CacheConf } from "./common.ts";
import type { SinkItem } from "./connector.ts";
import { decodePage, encodePage, type SinkQueue } from "./queue.ts";

/** One disk page: its row, how much of it is on disk, and the items not written yet. */
class Page {
  seq: number;
  /** Items in the page (sent ones included until the page is deleted). */
  n: number;
  /** Items already on disk (the first `written` of the page). */
  written: number;
  /** Items `written … n-1`, waiting for the next flush. */
  tail: SinkItem[];
  /** The decoded disk part while the page is being read back into memory. */
  loaded: SinkItem[] | null;
  prev: Page | null;
  next: Page | null;
  /** Deleted (sent or dropped): a pending flush skips it. */
  gone: boolean;
  /** The tag of its first item (SinkItem.tag; 0 for a page of an earlier run): its items read back from disk get it, a lower bound of theirs. */
  tag: number;
  constructor(seq: number, n: number, written: number) {
    this.seq = seq;
    this.tag = 0;
    this.n = n;
    this.written = written;
    this.tail = [];
    this.loaded = null;
    this.prev = null;
    this.next = null;
    this.gone = false;
  }
}

export class CachedQueue implements SinkQueue {
  private readonly mem: Ring<SinkItem>;
  private readonly pageSize: number;
  private readonly maxPages: number;
  private head: Page | null = null;
  private tail: Page | null = null;
  /** Items of the head page already sent. */
  private headSent = 0;
  /** The first item not in memory: page and offset (null when every item is in memory). */
  private fillPage: Page | null = null;
  private fillOff = 0;
  /** Full pages wholly beyond the memory tier (what the disk budget counts). */
  private spilledFull = 0;
  private nextSeq = 0;
  private count = 0;
  /** Pages with items not yet written. */
  private dirty: Page[] = [];
  /** Pages sent whole, to delete at the next flush. */
  private sent: number[] = [];
  private flushQueued = false;
  private readonly flushTask = (): void => {
    this.flushQueued = false;
    this.flush();
  };
  dropped = 0;
  /** Items read back from disk at start (the previous run's unsent items). */
  readonly restored: number;

  constructor(
    conf: CacheConf,
    private readonly store: SinkCacheStore,
    private readonly onDrop: (n: number) => void,
  ) {
    this.mem = new Ring(Math.max(1, conf.memoryCacheThreshold));
    this.pageSize = Math.max(1, conf.bufferPageSize);
    this.maxPages = Math.max(2, Math.floor(conf.maxDiskCache / this.pageSize));
    for (const r of store.pages()) {
      const p = new Page(r.seq, r.n, r.n);
      this.link(p);
      this.count += r.n;
      if (r.n >= this.pageSize) this.spilledFull++;
      this.nextSeq = r.seq + 1;
    }
    this.restored = this.count;
    this.fillPage = this.head;
  }

  /** Items waiting, all tiers. */
  get length(): number {
    return this.count;
  }
  /** Items held in memory (the `buffer_length` metric of the sink). */
  get memLength(): number {
    return this.mem.length;
  }
  /** Items held only on disk. */
  get diskLength(): number {
    return this.count - this.mem.length;
  }

  room(): number {
    // The cache never pushes back: it spills, then drops the oldest page.
    return Infinity;
  }

  push(item: SinkItem): void {
    this.count++;
    let p = this.tail;
    if (p === null || p.n >= this.pageSize) {
      p = new Page(this.nextSeq++, 0, 0);
      p.tag = item.tag;
      this.link(p);
    }
    if (p.tail.length === 0) this.dirty.push(p);
    p.tail.push(item);
    p.n++;
    if (this.fillPage === null && !this.mem.push(item)) {
      this.fillPage = p;
      this.fillOff = p.n - 1;
    }
    if (p.n === this.pageSize && this.fillPage !== null && (this.fillPage !== p || this.fillOff === 0)) {
      if (++this.spilledFull > this.maxPages) this.dropOldest();
    }
    this.queueFlush();
  }

  private queueFlush(): void {
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flushTask);
    }
  }

  /** Writes what was queued and deletes the pages sent since the last flush: one transaction. */
  flush(): void {
    const dirty = this.dirty;
    const sent = this.sent;
    if (dirty.length === 0 && sent.length === 0) return;
    const store = this.store;
    store.tx(() => {
      for (const seq of sent) store.delete(seq);
      for (const p of dirty) {
        if (p.gone || p.tail.length === 0) continue;
        const k = p.tail.length;
        const data = encodePage(p.tail);
        if (p.written === 0) store.insert(p.seq, k, data);
        else store.append(p.seq, k, data);
        p.written += k;
        if (p.loaded) for (const it of p.tail) p.loaded.push(it);
        p.tail = [];
      }
    });
    dirty.length = 0;
    sent.length = 0;
  }

  get writtenThrough(): boolean {
    return this.dirty.length === 0;
  }

  headTag(): number {
    const h = this.mem.peek();
    if (h !== undefined) return h.tag;
    return this.fillPage === null ? Infinity : this.fillPage.tag;
  }

  peek(): SinkItem | undefined {
    if (this.mem.length === 0 && this.fillPage !== null) this.refill();
    return this.mem.peek();
  }

  shift(): void {
    if (this.mem.shift() === undefined) return;
    this.count--;
    const h = this.head!;
    if (++this.headSent >= h.n) {
      this.headSent = 0;
      this.remove(h);
    }
  }

  /** Moves the oldest items beyond memory into it while it has room, page by page. */
  private refill(): void {
    const mem = this.mem;
    while (mem.free > 0 && this.fillPage !== null) {
      const p = this.fillPage;
      if (this.fillOff === 0 && p.n >= this.pageSize) this.spilledFull--;
      if (this.fillOff < p.written && p.loaded === null) {
        const data = this.store.read(p.seq);
        if (data === undefined) {
          // Deleted behind the queue's back (never by floe): what memory lacks of it is dropped, counted.
          const k = p.n - this.fillOff;
          this.count -= k;
          this.dropped += k;
          this.fillPage = p.next;
          if (this.fillOff === 0) this.remove(p);
          else p.n = this.fillOff;
          this.fillOff = 0;
          this.onDrop(k);
          continue;
        }
        p.loaded = decodePage(data);
        for (const it of p.loaded) it.tag = p.tag;
      }
      while (mem.free > 0 && this.fillOff < p.n) {
        const i = this.fillOff++;
        mem.push(i < p.written ? p.loaded![i]! : p.tail[i - p.written]!);
      }
      if (this.fillOff < p.n) return;
      p.loaded = null;
      this.fillPage = p.next;
      this.fillOff = 0;
    }
  }

  /** The disk budget: deletes the oldest full page wholly beyond memory and counts its items. */
  private dropOldest(): void {
    let p = this.fillPage;
    if (p !== null && this.fillOff > 0) p = p.next;
    while (p !== null && p.n < this.pageSize) p = p.next;
    if (p === null) return;
    this.spilledFull--;
    if (p === this.fillPage) {
      this.fillPage = p.next;
      this.fillOff = 0;
    }
    this.count -= p.n;
    this.dropped += p.n;
    this.remove(p);
    this.onDrop(p.n);
  }

  private link(p: Page): void {
    p.prev = this.tail;
    if (this.tail) this.tail.next = p;
    else this.head = p;
    this.tail = p;
  }

  private remove(p: Page): void {
    // Deleted with the next flush, in its transaction: one commit per tick, not one per page.
    if (p.written > 0) {
      this.sent.push(p.seq);
      this.queueFlush();
    }
    p.gone = true;
    p.loaded = null;
    p.tail = [];
    if (p.prev) p.prev.next = p.next;
    else this.head = p.next;
    if (p.next) p.next.prev = p.prev;
    else this.tail = p.prev;
    p.prev = p.next = null;
  }

  /**
   * At stop: everything is on disk once flushed, and the head page loses the items already sent
   * (so a stop, unlike a kill, repeats nothing); `clean` deletes it all instead.
   */
  stop(clean: boolean): void {
    if (clean) {
      this.store.clear();
      this.dirty.length = 0;
      this.sent.length = 0;
    } else {
      this.flush();
      const h = this.head;
      if (h !== null && this.headSent > 0) {
        const data = this.store.read(h.seq);
        const rest = data === undefined ? [] : decodePage(data).slice(this.headSent);
        this.store.tx(() => {
          this.store.delete(h.seq);
          if (rest.length > 0) this.store.insert(h.seq, rest.length, encodePage(rest));
        });
      }
    }
    this.mem.clear();
    this.head = this.tail = this.fillPage = null;
    this.headSent = this.fillOff = this.spilledFull = this.count = 0;
  }
}
