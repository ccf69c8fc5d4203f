/**
 * Meters for a process under test (bench.md §Method 8): CPU from /proc/<pid>/stat (utime+stime),
 * peak VmRSS / RssAnon sampled every 250 ms from /proc/<pid>/status, the machine's load average.
 */
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";

/**
 * The two CPUs of the method: the engine's, alone, and the one the broker and the generator
 * share. CPU 1 and CPU 0 unless `FLOE_BENCH_CPUS=ENGINE,LOAD` names others (on a 4-core Raspberry
 * Pi, e.g. `3,2`: off CPU 0, which takes the interrupts there).
 */
export const CPUS = benchCpus(process.env.FLOE_BENCH_CPUS);

function benchCpus(v: string | undefined): { engine: number; load: number } {
  if (v === undefined || v === "") return { engine: 1, load: 0 };
  const m = /^(\d+),(\d+)$/.exec(v.trim());
  if (!m || m[1] === m[2]) throw new Error(`FLOE_BENCH_CPUS=${v}: two different CPU numbers, ENGINE,LOAD (e.g. 1,0)`);
  return { engine: Number(m[1]), load: Number(m[2]) };
}

/** The `taskset` prefix for `cpu`; none without taskset. A CPU the machine lacks fails here, not in taskset. */
function taskset(cpu: number): string | null {
  if (!Bun.which("taskset")) return null;
  const online = cpus().length;
  if (cpu >= online) throw new Error(`CPU ${cpu} does not exist (${online} online): FLOE_BENCH_CPUS=ENGINE,LOAD picks the two CPUs`);
  return String(cpu);
}

/** `taskset -c CPU` when taskset exists (the engine on one CPU, broker + generator on the other). */
export function pinned(cpu: number): string[] {
  const c = taskset(cpu);
  return c === null ? [] : ["taskset", "-c", c];
}

/** Pins every thread of this process to `cpu` (the harness runs the generator in-process). */
export function pinSelf(cpu: number): void {
  const c = taskset(cpu);
  if (c !== null) Bun.spawnSync(["taskset", "-a", "-p", "-c", c, String(process.pid)], { stdout: "ignore", stderr: "ignore" });
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
