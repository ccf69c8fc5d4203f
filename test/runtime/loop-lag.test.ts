import { expect, test } from "bun:test";
import { LAG_BUCKETS, LoopLag } from "../../lib/runtime/loop-lag.ts";
import { waitFor } from "../helpers/wait.ts";

test("lag samples land in their histogram bucket and the window's max / p99 / p99.9", () => {
  const l = new LoopLag();
  for (let i = 0; i < 998; i++) l.record(0.0005);
  l.record(0.012);
  l.record(0.04);
  expect(l.count).toBe(1000);
  expect(l.counts[0]).toBe(998);
  expect(l.counts[LAG_BUCKETS.indexOf(0.015)]).toBe(1);
  expect(l.counts[LAG_BUCKETS.indexOf(0.05)]).toBe(1);
  expect(l.stats()).toEqual({ samples: 1000, maxMs: 40, p99Ms: 0.5, p999Ms: 12 });
  l.record(10);
  expect(l.counts[LAG_BUCKETS.length]).toBe(1);
  expect(l.maxEver).toBe(10);
});

test("a busy loop shows as lag; the probe's timer keeps nothing alive and stops when released", async () => {
  const l = new LoopLag();
  l.start();
  l.start();
  await waitFor(() => l.count > 0, "the probe's first tick");
  const ticks = l.count;
  const t = performance.now();
  while (performance.now() - t < 60) {
    // the loop is busy for 60 ms
  }
  await waitFor(() => l.count > ticks, "the tick after the busy spell");
  expect(l.stats().maxMs).toBeGreaterThanOrEqual(40);
  l.stop();
  expect(l.running).toBe(true);
  l.stop();
  expect(l.running).toBe(false);
  const n = l.count;
  // A fixed wait over several periods, to show that a stopped probe ticks no more.
  await Bun.sleep(40);
  expect(l.count).toBe(n);
});
