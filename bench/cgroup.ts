/**
 * A cgroup v1 `cpu` controller group (`/sys/fs/cgroup/cpu/<name>`) that holds processes to a
 * fraction of one core: `cpu.cfs_quota_us` of CPU time per `cpu.cfs_period_us`. bench/cluster.ts
 * `--cpu-quota` puts each group member in its own, so that a 2-core machine hosts several small
 * gateways while NATS and the publisher run unconstrained. Needs root and the v1 controller
 * mounted (the sessions and CI have both); fails saying which is missing.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const CPU_CGROUP_ROOT = "/sys/fs/cgroup/cpu";

export class CpuQuota {
  private constructor(readonly dir: string) {}

  /**
   * Creates (or reuses) group `name` allowing `cores` of one core (0.25 = 25 ms per 100 ms;
   * Infinity = no limit) with `shares` (cpu.shares, 1024 = a plain process's weight against the
   * machine's other work).
   */
  static create(name: string, cores: number, shares = 1024, periodUs = 100_000, root = CPU_CGROUP_ROOT): CpuQuota {
    if (!(cores > 0)) throw new Error(`cpu quota must be a positive fraction of a core, not ${cores}`);
    if (!existsSync(join(root, "cpu.cfs_period_us"))) throw new Error(`no cgroup v1 cpu controller at ${root} (mount it, or run without --cpu-quota)`);
    const dir = join(root, name);
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "cpu.cfs_period_us"), String(periodUs));
      writeFileSync(join(dir, "cpu.cfs_quota_us"), cores === Infinity ? "-1" : String(Math.round(cores * periodUs)));
      writeFileSync(join(dir, "cpu.shares"), String(shares));
    } catch (e) {
      throw new Error(`cannot set up cgroup ${dir} (root is needed): ${(e as Error).message}`);
    }
    return new CpuQuota(dir);
  }

  /** Moves process `pid` (all its threads) into the group. */
  add(pid: number): void {
    writeFileSync(join(this.dir, "cgroup.procs"), String(pid));
  }

  /** The processes in the group now. */
  pids(): number[] {
    return readFileSync(join(this.dir, "cgroup.procs"), "utf8").split("\n").filter((l) => l).map(Number);
  }

  /** `cpu.cfs_quota_us` / `cpu.cfs_period_us` as set. */
  quota(): { quotaUs: number; periodUs: number } {
    return { quotaUs: Number(readFileSync(join(this.dir, "cpu.cfs_quota_us"), "utf8")), periodUs: Number(readFileSync(join(this.dir, "cpu.cfs_period_us"), "utf8")) };
  }

  /** How often and how long the group was held back by its quota (`cpu.stat`). */
  throttled(): { periods: number; throttledPeriods: number; throttledSeconds: number } {
    const stat = Object.fromEntries(readFileSync(join(this.dir, "cpu.stat"), "utf8").split("\n").filter((l) => l).map((l) => l.split(" ") as [string, string]));
    return { periods: Number(stat.nr_periods ?? 0), throttledPeriods: Number(stat.nr_throttled ?? 0), throttledSeconds: Number(stat.throttled_time ?? 0) / 1e9 };
  }

  /** Moves whatever is left back to the root group and removes the group. */
  remove(): void {
    const root = join(this.dir, "..");
    for (const pid of this.pids()) {
      try {
        writeFileSync(join(root, "cgroup.procs"), String(pid));
      } catch {
        // the process ended meanwhile
      }
    }
    rmdirSync(this.dir);
  }
}

/** CPU time (user + system, seconds) process `pid` used so far (`/proc/<pid>/stat`, 100 ticks a second); 0 once it is gone. */
export function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}
