/**
 * Returns the executable's resident code pages that the process no longer uses to the page cache.
 * A compiled floe maps ~120 MB of executable (Bun's machine code, its read-only data, floe's
 * bytecode); start-up, the SQL parser, the planner and JSC's compiler tiers touch ~50 MiB of it, of
 * which a running rule keeps using ~25 (bench/notes.md). RSS counts every page touched since the
 * start, so half of a busy daemon's file-backed memory is code it ran once.
 *
 * `madvise(MADV_DONTNEED)` on a private file mapping drops the process's page-table entries: the
 * pages stay in the page cache, and the next use of one maps it again with a minor fault (no disk
 * read). Only mappings that were never written are advised — not writable now and holding no
 * anonymous (copy-on-write) page — because on a written private page the advice would discard the
 * write (the relocated pointers of the RELRO segment, Bun's writable section of the bundle).
 * Clean file pages were always the kernel's to reclaim; what changes is that RSS counts the code in
 * use, and that the kernel can drop code no process maps before code that runs.
 */
import { readFileSync, readlinkSync } from "node:fs";

const MADV_DONTNEED = 4;

type Madvise = (addr: number, length: number, advice: number) => number;
let madvise: Madvise | null | undefined;

/** libc's madvise through bun:ffi, loaded at the first trim; null where there is none. */
function libcMadvise(): Madvise | null {
  if (madvise !== undefined) return madvise;
  madvise = null;
  if (process.platform !== "linux") return null;
  try {
    const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi");
    const lib = dlopen("libc.so.6", { madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 } });
    madvise = (addr, length, advice) => lib.symbols.madvise(addr, length, advice) as number;
  } catch {
    // Another C library (musl names it libc.so), or no FFI: nothing to trim with.
  }
  return madvise;
}

/** A mapping of /proc/self/smaps that may be advised: the executable's, read-only, never written. */
export interface CodeRange {
  readonly start: number;
  readonly length: number;
  readonly rssKb: number;
}

/** The executable's mappings that are safe to drop, parsed from /proc/self/smaps text. */
export function cleanCodeRanges(smaps: string, exe: string): CodeRange[] {
  const out: CodeRange[] = [];
  let i = 0;
  // One mapping is a header line ("start-end perms offset dev inode path") and its "Key: n kB" lines.
  while (i < smaps.length) {
    let eol = smaps.indexOf("\n", i);
    if (eol < 0) eol = smaps.length;
    const header = smaps.slice(i, eol);
    i = eol + 1;
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s+(.*)$/.exec(header);
    if (!m) continue;
    let rss = 0;
    let anon = -1;
    while (i < smaps.length && !/^[0-9a-f]+-/.test(smaps.slice(i, i + 17))) {
      let e = smaps.indexOf("\n", i);
      if (e < 0) e = smaps.length;
      const line = smaps.slice(i, e);
      i = e + 1;
      if (line.startsWith("Rss:")) rss = Number(/\d+/.exec(line)?.[0] ?? 0);
      else if (line.startsWith("Anonymous:")) anon = Number(/\d+/.exec(line)?.[0] ?? -1);
    }
    const perms = m[3]!;
    if (m[4] !== exe || perms[1] !== "-" || perms[3] !== "p" || anon !== 0 || rss === 0) continue;
    const start = parseInt(m[1]!, 16);
    out.push({ start, length: parseInt(m[2]!, 16) - start, rssKb: rss });
  }
  return out;
}

/**
 * Drops the executable's clean pages from the process's resident set (Linux; a no-op elsewhere).
 * Returns the KiB they held (0 when nothing was advised). The call reads /proc/self/smaps and
 * makes one madvise per mapping: 1–3 ms here; the pages still used come back with minor faults.
 */
export function trimCodePages(): number {
  const advise = libcMadvise();
  if (!advise) return 0;
  let smaps: string;
  let exe: string;
  try {
    smaps = readFileSync("/proc/self/smaps", "latin1");
    exe = readlinkSync("/proc/self/exe");
  } catch {
    return 0;
  }
  let kb = 0;
  for (const r of cleanCodeRanges(smaps, exe)) if (advise(r.start, r.length, MADV_DONTNEED) === 0) kb += r.rssKb;
  return kb;
}

/**
 * Trims 3 s after the call, when start-up's code has run, and then every `periodMs` (0: never):
 * for a run with no API whose bursts would say when (the daemon schedules its own). Returns the stop.
 */
export function trimCodePagesEvery(periodMs: number): () => void {
  if (periodMs <= 0) return () => {};
  let timer = setTimeout(function tick() {
    trimCodePages();
    timer = setTimeout(tick, periodMs);
    timer.unref();
  }, 3000);
  timer.unref();
  return () => clearTimeout(timer);
}

/** FLOE_CODE_TRIM_S: seconds between trims of the executable's code pages (default 60, 0: never). */
export function codeTrimPeriod(v: string | undefined): number {
  if (v === undefined || v === "") return 60;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : 60;
}
