/**
 * The alter queue (`resendAlterQueue`, rules-and-sinks.md §3.4) against real endpoints that go
 * down and come back: failed items go through `op_<type>_<i>_cache` to the resend instance
 * `sink_<type>_<i>_resend`; `resendPriority` orders cached against fresh items,
 * `resendIndicatorField` marks what was resent, `resendDestination` redirects it (MQTT topic), and
 * the queue survives a restart of the rule.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { connectAsync, type MqttClient } from "mqtt";
import { HttpCollector } from "../helpers/http.ts";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { metric, streams, testRuntime, waitFor, type TestRuntime } from "../helpers/runtime.ts";
import type { RunHandle } from "../../lib/runtime/rule.ts";

const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="alt/in")`);
let open: HttpCollector[] = [];
afterEach(() => {
  for (const h of open) h.down();
  open = [];
});

async function publish(t: TestRuntime, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) await t.env.pubsub.publish("alt/in", { n: i });
}

async function restRule(props: Record<string, unknown>, t: TestRuntime = testRuntime(), id = "alt") {
  const http = await HttpCollector.create();
  open.push(http);
  const def = t.rule(
    {
      id,
      sql: "SELECT n FROM s",
      actions: [{ rest: { url: http.url, method: "post", sendSingle: true, timeout: 2000, enableCache: true, resendAlterQueue: true, ...props } }],
    },
    defs,
  );
  return { http, def, rule: await def.start(), t };
}

const resendFailures = (r: RunHandle) => metric(r, "sink_rest_0_resend_0_exceptions_total") as number;

test("failed items go through op_<sink>_cache to sink_<sink>_resend, with eKuiper's node names", async () => {
  const { http, rule, t } = await restRule({ resendInterval: 10 });
  expect(rule.topo()!.edges).toEqual({
    op_2_project: ["op_rest_0_0_transform"],
    op_rest_0_0_transform: ["op_rest_0_1_encode"],
    op_rest_0_1_encode: ["sink_rest_0"],
    op_rest_0_cache: ["sink_rest_0_resend"],
    sink_rest_0: ["op_rest_0_cache"],
    source_s: ["op_2_project"],
  });
  await publish(t, 0, 3);
  await waitFor(() => metric(rule, "op_rest_0_cache_0_records_in_total") === 3, "three failed items cached");
  expect(metric(rule, "sink_rest_0_0_exceptions_total")).toBe(3);
  expect(metric(rule, "sink_rest_0_0_records_out_total")).toBe(0);
  http.up();
  await waitFor(() => http.bodies.length === 3, "the resend");
  expect(http.bodies).toEqual([0, 1, 2]);
  await publish(t, 3, 5);
  await waitFor(() => http.bodies.length === 5, "fresh items by the main sink");
  // Records count out once the response is back, just after the server has seen the body.
  await waitFor(() => metric(rule, "sink_rest_0_0_records_out_total") === 2, "two out of the main sink");
  await waitFor(() => metric(rule, "sink_rest_0_resend_0_records_out_total") === 3, "three out of the resend sink");
  expect(metric(rule, "op_rest_0_cache_0_records_out_total")).toBe(3);
  expect(metric(rule, "op_rest_0_cache_0_buffer_length")).toBe(0);
  // Status order: operators (the cache op last), then the two sinks.
  const keys = Object.keys(rule.metrics());
  expect(keys.indexOf("op_rest_0_cache_0_records_in_total")).toBeLessThan(keys.indexOf("sink_rest_0_0_records_in_total"));
  expect(keys.indexOf("sink_rest_0_0_records_in_total")).toBeLessThan(keys.indexOf("sink_rest_0_resend_0_records_in_total"));
  await rule.stop();
  expect(rule.lost()).toBe(0);
});

test("resendPriority 1: cached items first — fresh ones queue behind them, everything arrives in order", async () => {
  const { http, rule, t } = await restRule({ resendPriority: 1, resendInterval: 20 });
  await publish(t, 0, 10);
  await waitFor(() => metric(rule, "op_rest_0_cache_0_records_in_total") === 10, "ten cached");
  // Only the first item was tried by the main sink; the rest queued behind it.
  expect(metric(rule, "sink_rest_0_0_exceptions_total")).toBe(1);
  http.up();
  await publish(t, 10, 20);
  await waitFor(() => http.bodies.length === 20, "all twenty");
  expect(http.bodies).toEqual([...Array(20).keys()]);
  // The ten cached ones went through the resend instance; a fresh one published after it caught
  // up (a loaded machine) goes straight through the main sink — in order either way. A sink
  // counts a record out once the response is back, after the server has seen the body.
  const resent = () => metric(rule, "sink_rest_0_resend_0_records_out_total");
  await waitFor(() => Number(resent()) + Number(metric(rule, "sink_rest_0_0_records_out_total")) === 20, "twenty counted out");
  expect(resent()).toBeGreaterThanOrEqual(10);
  await rule.stop();
});

test("resendPriority -1: fresh items first — a cached item is resent only while the main sink is idle", async () => {
  const { http, rule, t } = await restRule({ resendPriority: -1, resendInterval: 200 });
  await publish(t, 0, 5);
  await waitFor(() => resendFailures(rule) > 0, "a failed resend (the resend instance now sleeps)");
  expect(metric(rule, "sink_rest_0_0_exceptions_total")).toBe(5);
  http.up();
  await publish(t, 5, 15);
  await waitFor(() => http.bodies.length === 15, "all fifteen");
  expect(http.bodies).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0, 1, 2, 3, 4]);
  await rule.stop();
});

test("resendPriority 0: both instances send independently; nothing is lost", async () => {
  const { http, rule, t } = await restRule({ resendPriority: 0, resendInterval: 5 });
  await publish(t, 0, 5);
  await waitFor(() => metric(rule, "op_rest_0_cache_0_records_in_total") === 5, "five cached");
  http.up();
  await publish(t, 5, 10);
  await waitFor(() => http.bodies.length === 10, "all ten");
  expect([...http.bodies].sort((a, b) => a - b)).toEqual([...Array(10).keys()]);
  await rule.stop();
});

test("resendIndicatorField marks every resent row; items sent on time are unchanged", async () => {
  const { http, rule, t } = await restRule({ resendIndicatorField: "resent", resendInterval: 5 });
  await publish(t, 0, 2);
  await waitFor(() => metric(rule, "op_rest_0_cache_0_records_in_total") === 2, "two cached");
  http.up();
  await waitFor(() => http.raw.length === 2, "the resend");
  await publish(t, 2, 3);
  await waitFor(() => http.raw.length === 3, "a fresh item");
  expect(http.raw).toEqual(['{"n":0,"resent":true}', '{"n":1,"resent":true}', '{"n":2}']);
  await rule.stop();
});

test("the resend queue survives a restart of the rule (disk), and cleanCacheAtStop discards it", async () => {
  for (const clean of [false, true]) {
    const t = testRuntime();
    const { http, def, rule: first } = await restRule({ resendInterval: 5, memoryCacheThreshold: 4, bufferPageSize: 2, maxDiskCache: 100, cleanCacheAtStop: clean }, t, `restart_${clean}`);
    await publish(t, 0, 7);
    await waitFor(() => metric(first, "op_rest_0_cache_0_records_in_total") === 7, "seven cached");
    await first.stop();
    expect(first.lost()).toBe(0);
    http.up();
    const rule = await def.start();
    await publish(t, 7, 8);
    await waitFor(() => http.bodies.includes(7), "the fresh item");
    if (clean) {
      // A fixed wait, to show that nothing cached comes after the fresh item (resendInterval is 5 ms).
      await Bun.sleep(50);
      expect(http.bodies).toEqual([7]);
    } else {
      await waitFor(() => http.bodies.length === 8, "the seven cached as well");
      expect([...http.bodies].sort((a, b) => a - b)).toEqual([...Array(8).keys()]);
    }
    await rule.stop();
    http.down();
  }
});

resendDestinationSuite();

/** resendDestination against a real broker that is killed and restarted. */
function resendDestinationSuite(): void {
  let broker: Mosquitto;
  let sub: MqttClient;
  const got: string[] = [];
  beforeAll(async () => {
    broker = await Mosquitto.start();
    // A persistent session: what is published while this client reconnects waits for it.
    sub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt", clientId: "alt-collector", clean: false, reconnectPeriod: 50 });
    sub.on("message", (topic, p) => got.push(`${topic} ${p.toString()}`));
    sub.on("error", () => {});
    await sub.subscribeAsync("alt/#", { qos: 1 });
  });
  afterAll(async () => {
    await sub.endAsync();
    await broker.stop();
  });

  test("resendDestination: the resend instance publishes to that topic once the broker is back", async () => {
    const t = testRuntime();
    const rule = await t.rule(
      {
        id: "altmq",
        sql: "SELECT n FROM s",
        actions: [
          {
            mqtt: {
              server: broker.url,
              topic: "alt/live",
              qos: 1,
              sendSingle: true,
              enableCache: true,
              resendAlterQueue: true,
              resendDestination: "alt/resend",
              resendIndicatorField: "resent",
              resendInterval: 20,
            },
          },
        ],
      },
      defs,
    ).start();
    await waitFor(() => metric(rule, "sink_mqtt_0_0_connection_status") === 1 && metric(rule, "sink_mqtt_0_resend_0_connection_status") === 1, "both instances connected");
    await publish(t, 0, 2);
    await waitFor(() => got.length === 2, "two live messages");
    await broker.stop();
    // The client retries: connecting (0) again, with the loss recorded.
    await waitFor(() => metric(rule, "sink_mqtt_0_0_connection_status") === 0 && (metric(rule, "sink_mqtt_0_0_connection_last_disconnected_time") as number) > 0, "the main instance sees the broker go");
    await publish(t, 2, 5);
    await waitFor(() => metric(rule, "op_mqtt_0_cache_0_records_in_total") === 3, "three cached");
    expect(metric(rule, "sink_mqtt_0_0_last_exception")).toBe("mqtt client is not connected");
    await broker.restart();
    await waitFor(() => got.length === 5, "the three resent", 15_000);
    await waitFor(() => metric(rule, "sink_mqtt_0_0_connection_status") === 1, "main reconnected", 15_000);
    await publish(t, 5, 6);
    await waitFor(() => got.length === 6, "a live message again");
    expect(got.sort()).toEqual([
      'alt/live {"n":0}',
      'alt/live {"n":1}',
      'alt/live {"n":5}',
      'alt/resend {"n":2,"resent":true}',
      'alt/resend {"n":3,"resent":true}',
      'alt/resend {"n":4,"resent":true}',
    ]);
    expect(metric(rule, "sink_mqtt_0_resend_0_records_out_total")).toBe(3);
    await rule.stop();
  }, 30_000);
}
