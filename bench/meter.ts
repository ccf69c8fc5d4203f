/**
 * Meters for a process under test (bench.md §Method 8): CPU from /proc/<pid>/stat (utime+stime),
 * peak VmRSS / RssAnon sampled every 250 ms from /proc/<pid>/status, the machine's load average.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";

/** `taskset -c CPU` when taskset exists (the engine on one CPU, broker + generator on the other). */
export function pinned(cpu: number): string[] {
  return Bun.which("taskset") ? ["taskset", "-c", String(cpu)] : [];
}

/** Pins every thread of this process to `cpu` (the harness runs the generator in-process). */
export function pinSelf(cpu: number): void {
  if (Bun.which("taskset")) Bun.spawnSync(["taskset", "-a", "-p", "-c", String(cpu), String(process.pid)], { stdout: "ignore", stderr: "ignore" });
}

const TICKS_PER_SECOND = 100; // Linux USER_HZ

/** CPU seconds (user + system) the process has used so far; NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** VmRSS and RssAnon in KiB; zeros once the process is gone. */
export function memKb(pid: number): { rss: number; anon: number } {
  try {
    const s = readFileSync(`/proc/${pid}/status`, "utf8");
    const get = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(s)?.[1] ?? 0);
    return { rss: get("VmRSS"), anon: get("RssAnon") };
  } catch {
    return { rss: 0, anon: 0 };
  }
}

export function load(): number[] {
  return loadavg().map((x) => Math.round(x * 100) / 100);
}

/** Samples memory every 250 ms: peaks, and a series [seconds since start, rss KiB] every ~5 s. */
export class MemSampler {
  peakRss = 0;
  peakAnon = 0;
  readonly series: [number, number, number][] = [];
  private readonly t0 = performance.now();
  private readonly timer: ReturnType<typeof setInterval>;
  private lastSeries = -Infinity;

  constructor(private readonly pid: number) {
    this.sample();
    this.timer = setInterval(() => this.sample(), 250);
  }

  private sample(): void {
    const m = memKb(this.pid);
    if (m.rss > this.peakRss) this.peakRss = m.rss;
    if (m.anon > this.peakAnon) this.peakAnon = m.anon;
    const t = (performance.now() - this.t0) / 1000;
    if (t - this.lastSeries >= 5) {
      this.lastSeries = t;
      this.series.push([Math.round(t), m.rss, m.anon]);
    }
  }

  /** RSS (KiB) of the last sample at or before `seconds`. */
  rssAt(seconds: number): number {
    let v = 0;
    for (const [t, rss] of this.series) if (t <= seconds) v = rss;
    return v;
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}

export const mib = (kb: number) => Math.round(kb / 102.4) / 10;
