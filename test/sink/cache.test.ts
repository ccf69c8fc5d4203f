/**
 * The sink cache (rules-and-sinks.md §3.4) against a real HTTP server that goes down and comes
 * back: memory tier, disk pages in bun:sqlite, the disk budget's exact drop count, in-order resend,
 * and the cache surviving a restart of the rule unless cleanCacheAtStop.
 */
import { afterEach, expect, test } from "bun:test";
import { HttpCollector } from "../helpers/http.ts";
import { metric, streams, testRuntime, waitFor, type TestRuntime } from "../helpers/runtime.ts";

const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="cache/in")`);
let open: HttpCollector[] = [];
afterEach(() => {
  for (const h of open) h.down();
  open = [];
});

async function setup(cache: Record<string, unknown>, t: TestRuntime = testRuntime(), id = "c") {
  const http = await HttpCollector.create();
  open.push(http);
  const def = t.rule(
    {
      id,
      sql: "SELECT n FROM s",
      actions: [{ rest: { url: `http://127.0.0.1:${http.port}/`, method: "post", sendSingle: true, timeout: 2000, enableCache: true, resendInterval: 5, ...cache } }],
    },
    defs,
  );
  return { http, def, rule: await def.start(), t };
}

async function publish(t: TestRuntime, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) await t.env.pubsub.publish("cache/in", { n: i });
}

test("a sink down longer than the memory threshold spills to disk pages; all arrive in order after recovery", async () => {
  const { http, rule, t } = await setup({ memoryCacheThreshold: 8, bufferPageSize: 4, maxDiskCache: 400 });
  await publish(t, 0, 60);
  await waitFor(() => (metric(rule, "sink_rest_0_0_exceptions_total") as number) > 0, "failed sends");
  // 8 in memory, the rest on disk pages and in the page being filled.
  expect(metric(rule, "sink_rest_0_0_buffer_length")).toBe(8);
  expect(metric(rule, "op_rest_0_2_cache_0_buffer_length")).toBe(52);
  http.up();
  await waitFor(() => http.bodies.length === 60, "all 60 after recovery");
  expect(http.bodies).toEqual([...Array(60).keys()]);
  expect(rule.sinks[0]!.dropped).toBe(0);
  await rule.stop();
});

test("with a disk budget smaller than the outage, exactly the dropped count is reported", async () => {
  // 8 in memory; pages of 4, at most max(2, 16/4) = 4 on disk. 60 items while down: 52 spill into
  // 13 pages, 9 of which are evicted oldest first: 36 dropped, 24 delivered.
  const { http, rule, t } = await setup({ memoryCacheThreshold: 8, bufferPageSize: 4, maxDiskCache: 16 });
  await publish(t, 0, 60);
  await waitFor(() => (metric(rule, "sink_rest_0_0_exceptions_total") as number) > 0, "failed sends");
  expect(rule.sinks[0]!.dropped).toBe(36);
  expect(metric(rule, "op_rest_0_2_cache_0_exceptions_total")).toBe(9);
  http.up();
  await waitFor(() => http.bodies.length === 24, "the 24 kept");
  expect(http.bodies).toEqual([...[...Array(8).keys()], ...Array.from({ length: 16 }, (_, i) => 44 + i)]);
  await rule.stop();
  expect(rule.lost()).toBe(36);
});

test("the cache survives a restart of the rule, and cleanCacheAtStop discards it", async () => {
  for (const clean of [false, true]) {
    const t = testRuntime();
    const { http, def, rule: first } = await setup({ memoryCacheThreshold: 4, bufferPageSize: 2, maxDiskCache: 100, cleanCacheAtStop: clean }, t, `restart_${clean}`);
    await publish(t, 0, 11);
    await waitFor(() => (metric(first, "sink_rest_0_0_exceptions_total") as number) > 0, "failed sends");
    await first.stop();
    http.up();
    const rule = await def.start();
    await publish(t, 11, 13);
    if (clean) {
      await waitFor(() => http.bodies.length === 2, "the two new items");
      expect(http.bodies).toEqual([11, 12]);
    } else {
      await waitFor(() => http.bodies.length === 13, "the 11 cached, then the 2 new");
      expect(http.bodies).toEqual([...Array(13).keys()]);
    }
    await rule.stop();
    http.down();
  }
});

test("cache properties are validated even when the cache is off", () => {
  const t = testRuntime();
  expect(() => t.rule({ id: "v", sql: "SELECT n FROM s", actions: [{ nop: { enableCache: true, memoryCacheThreshold: 100 } }] }, defs)).toThrow(
    "fail to parse sink configuration: invalid cache properties: memoryCacheThresholdTooSmall:memoryCacheThreshold must be greater than or equal to bufferPageSize\nmemoryCacheThresholdNotMultiple:memoryCacheThreshold must be a multiple of bufferPageSize",
  );
  expect(() => t.rule({ id: "v", sql: "SELECT n FROM s", actions: [{ nop: { bufferPageSize: 0 } }] }, defs)).toThrow("bufferPageSize:bufferPageSize must be positive");
});

test("without cache or retry a failed send is counted and dropped; with resendInterval it is retried", async () => {
  const t = testRuntime();
  const http = await HttpCollector.create();
  open.push(http);
  const mk = (id: string, extra: Record<string, unknown>) =>
    t.rule({ id, sql: "SELECT n FROM s", actions: [{ rest: { url: `http://127.0.0.1:${http.port}/`, method: "post", sendSingle: true, ...extra } }] }, defs);
  const drop = await mk("drop", {}).start();
  const retry = await mk("retry", { resendInterval: 10 }).start();
  await publish(t, 0, 3);
  await waitFor(() => metric(drop, "sink_rest_0_0_exceptions_total") === 3, "three failures");
  expect(String(metric(drop, "sink_rest_0_0_last_exception"))).toContain("rest sink fails to send out the data:err=");
  expect(String(metric(drop, "sink_rest_0_0_last_exception"))).toContain('recoverAble=true method=POST path="http://127.0.0.1:');
  await waitFor(() => (metric(retry, "sink_rest_0_0_exceptions_total") as number) >= 3, "retries");
  http.up();
  await waitFor(() => http.bodies.length === 3, "the retried three");
  expect(http.bodies).toEqual([0, 1, 2]);
  expect(metric(retry, "sink_rest_0_0_records_out_total")).toBe(3);
  expect(metric(drop, "sink_rest_0_0_records_out_total")).toBe(0);
  await drop.stop();
  await retry.stop();
});
