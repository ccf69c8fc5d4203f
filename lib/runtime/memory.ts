/**
 * Keeps a long run's resident memory flat without stopping the world on the message path. JSC
 * grows its heap with the allocation rate, so RSS keeps climbing for a while after the live set
 * has stopped growing; on a gateway with a few hundred MB that headroom is the budget.
 *
 * The governor reads the anonymous part of RSS (the heap's; the executable's file-backed pages vary
 * with code use, runtime/code-pages.ts) every `every` calls, at most once per `intervalMs`
 * (`process.memoryUsage.rss()` opens, reads and closes /proc/self/statm, ~18 µs here: 1.6–2.3 % of
 * an MQTT W1 profile at one read per 20 ms; `anonymousBytes` re-reads one open descriptor, ~3 µs),
 * and, when it stands
 * `headroom` bytes above the level left by the previous collection, asks JSC for a full collection
 * *asynchronously*
 * (`Bun.gc(false)`): marking runs on JSC's collector thread and sweeping is incremental, so the
 * loop never waits for a whole collection. A synchronous full collection here stalled the loop for
 * 35–350 ms, long enough for a broker's queue of QoS 1 messages to overflow. After a
 * request the governor waits `settleMs` and takes the lowest RSS read meanwhile as the new floor.
 * Synchronous collections (and `Bun.shrink`) run only when the process is idle: see `idleTicks`.
 */

import { closeSync, openSync, readSync } from "node:fs";

/** How long a requested collection gets to run before its effect is read. */
const SETTLE_MS = 1000;

let statm = -2;
let pageSize = 0;
const statmBuf = Buffer.alloc(128);

/**
 * Resident pages from /proc/self/statm read at offset 0 of a descriptor kept open (-1: unreadable);
 * `anonymous`: less its file-backed and shared pages (the third field), i.e. RssAnon.
 */
function residentPages(anonymous = false): number {
  if (statm === -2) {
    try {
      statm = openSync("/proc/self/statm", "r");
    } catch {
      statm = -1;
    }
  }
  if (statm < 0) return -1;
  let n: number;
  try {
    n = readSync(statm, statmBuf, 0, statmBuf.length, 0);
  } catch {
    closeSync(statm);
    statm = -1;
    return -1;
  }
  // "size resident shared …": the second field, less the third for the anonymous pages.
  let i = 0;
  while (i < n && statmBuf[i] !== 32) i++;
  let v = 0;
  for (i++; i < n; i++) {
    const c = statmBuf[i]!;
    if (c < 48 || c > 57) break;
    v = v * 10 + c - 48;
  }
  if (!anonymous) return v;
  let shared = 0;
  for (i++; i < n; i++) {
    const c = statmBuf[i]!;
    if (c < 48 || c > 57) break;
    shared = shared * 10 + c - 48;
  }
  return v - shared;
}

/** The process's resident set in bytes: one `pread` where /proc is there, else `process.memoryUsage.rss()`. */
export function residentBytes(): number {
  const pages = residentPages();
  if (pages <= 0) return process.memoryUsage.rss();
  // The page size is whatever makes the runtime's figure (the same statm field): a power of two.
  if (pageSize === 0) pageSize = 2 ** Math.round(Math.log2(process.memoryUsage.rss() / pages));
  return pages * pageSize;
}

/**
 * The process's anonymous resident memory in bytes (the heap, the allocator, stacks): RSS without
 * the executable's file-backed pages, which come and go with code use (runtime/code-pages.ts).
 * Where /proc is not there, the whole RSS.
 */
export function anonymousBytes(): number {
  if (pageSize === 0 && residentBytes() <= 0) return process.memoryUsage.rss();
  const pages = residentPages(true);
  return pages > 0 && pageSize > 0 ? pages * pageSize : process.memoryUsage.rss();
}

export class MemoryGovernor {
  private floor = 0;
  private calls = 0;
  private settleUntil = 0;
  private low = 0;
  private seen = 0;
  /** The earliest time of the next RSS read (performance.now()). */
  private nextRead = 0;
  /** Consecutive `idleTick()` calls with no work in between. */
  idleTicks = 0;
  /** Concurrent full collections the governor requested. */
  collections = 0;

  constructor(
    private readonly headroom: number = Number(process.env.FLOE_GC_HEADROOM_MB ?? 8) * 1048576,
    private readonly every: number = 8,
    private readonly settleMs: number = SETTLE_MS,
    private readonly collect: () => void = () => Bun.gc(false),
    private readonly intervalMs: number = 20,
    private readonly rss: () => number = anonymousBytes,
  ) {}

  /** Call once per batch of work (an integer increment; RSS is read every `every` calls). */
  check(): void {
    if (++this.calls % this.every !== 0 || this.headroom <= 0) return;
    const now = performance.now();
    if (now < this.nextRead) return;
    this.nextRead = now + this.intervalMs;
    const rss = this.rss();
    if (this.settleUntil !== 0) {
      // The collection's effect is the lowest RSS read while it runs: that is the new floor.
      if (rss < this.low) this.low = rss;
      if (now < this.settleUntil) return;
      this.settleUntil = 0;
      this.floor = this.low;
    } else if (this.floor === 0 || rss < this.floor) this.floor = rss;
    else if (rss > this.floor + this.headroom) {
      this.collect();
      this.collections++;
      this.settleUntil = now + this.settleMs;
      this.low = rss;
    }
  }

  /**
   * Called by a periodic timer: counts the ticks in a row in which no batch was processed, so a
   * caller can run stop-the-world work (a synchronous collection, `Bun.shrink`) only when the
   * message path has been quiet for a while.
   */
  idleTick(): number {
    if (this.calls === this.seen) this.idleTicks++;
    else {
      this.seen = this.calls;
      this.idleTicks = 0;
    }
    return this.idleTicks;
  }
}

/** The process's governor (daemon, both pipe-mode runners): checked per batch, never stops the world. */
export const memoryGovernor = new MemoryGovernor();

