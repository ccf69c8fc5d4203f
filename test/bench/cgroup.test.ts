/** bench/cgroup.ts: the cgroup v1 cpu group `bench/cluster.ts --cpu-quota` puts each member in. */
import { expect, test } from "bun:test";
import { CpuQuota } from "../../bench/cgroup.ts";

test("a process moved into a cpu quota group is held there with the quota set, and leaves with the group", async () => {
  const q = CpuQuota.create(`floe-test-${process.pid}`, 0.25);
  const proc = Bun.spawn(["sleep", "30"]);
  try {
    q.add(proc.pid);
    expect(q.pids()).toEqual([proc.pid]);
    expect(q.quota()).toEqual({ quotaUs: 25_000, periodUs: 100_000 });
    expect(q.throttled().throttledPeriods).toBeGreaterThanOrEqual(0);
  } finally {
    proc.kill("SIGKILL");
    await proc.exited;
    q.remove();
  }
  expect(() => q.pids()).toThrow();
});

test("a quota that is not a positive fraction of a core is refused", () => {
  expect(() => CpuQuota.create("floe-test-bad", 0)).toThrow("cpu quota must be a positive fraction of a core, not 0");
});
