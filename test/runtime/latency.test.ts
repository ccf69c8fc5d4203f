/**
 * process_latency_us on every node (rest-api.md §6.2): sources (the sampled wait in the bus),
 * the decoder, operators and sink helpers, each sampled on the first item and then one in 64.
 * The clock (`performance.now`) is replaced by one that advances a fixed step per reading, so the
 * values are deterministic and never round to zero.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { connectAsync } from "mqtt";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { metric, streams, testRuntime, waitFor } from "../helpers/runtime.ts";

const realNow = performance.now.bind(performance);
let stepMs = 0.001;
let fake = 0;
function fakeClock(step: number): void {
  stepMs = step;
  performance.now = () => (fake += stepMs);
}
afterEach(() => {
  performance.now = realNow;
});

const defs = streams(`CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="lat/in")`);

test("operators are timed on the first item and then one in 64, net of their downstream", async () => {
  const t = testRuntime();
  const rule = await t.rule({ id: "lat", sql: "SELECT n * 2 AS d FROM m WHERE n >= 0", actions: [{ nop: { sendSingle: true, compression: "gzip" } }] }, defs).start();
  fakeClock(0.001);
  await t.env.pubsub.publish("lat/in", { n: 1 });
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 1, "one result");
  const nodes = ["source_m", "op_2_filter", "op_3_project", "op_nop_0_0_transform", "op_nop_0_1_encode", "op_nop_0_2_compress", "sink_nop_0"];
  const first = nodes.map((n) => metric(rule, `${n}_0_process_latency_us`) as number);
  for (const v of first) expect(v).toBeGreaterThan(0);
  // A filter's sample excludes the project, transform, encode… it pushed to: its own two clock
  // steps, not the dozen its synchronous downstream took.
  expect(first[1]).toBeLessThanOrEqual(3);
  // Items 2..64 are not sampled: a slower clock does not show.
  fakeClock(0.1);
  for (let n = 2; n <= 64; n++) await t.env.pubsub.publish("lat/in", { n });
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 64, "64 results");
  expect(metric(rule, "op_3_project_0_process_latency_us")).toBe(first[2]!);
  expect(metric(rule, "op_nop_0_0_transform_0_process_latency_us")).toBe(first[3]!);
  // So is a sink whose sends complete synchronously; its last invocation is stamped all the same.
  expect(metric(rule, "sink_nop_0_0_process_latency_us")).toBe(first[6]!);
  const last = metric(rule, "sink_nop_0_0_last_invocation") as number;
  expect(last).toBeGreaterThan(Date.now() - 5000);
  // Item 65 is.
  await t.env.pubsub.publish("lat/in", { n: 65 });
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 65, "65 results");
  expect(metric(rule, "op_3_project_0_process_latency_us") as number).toBeGreaterThanOrEqual(100);
  expect(metric(rule, "op_nop_0_0_transform_0_process_latency_us") as number).toBeGreaterThanOrEqual(100);
  expect(metric(rule, "sink_nop_0_0_process_latency_us") as number).toBeGreaterThanOrEqual(100);
  await rule.stop();
});

let broker: Mosquitto;
beforeAll(async () => {
  broker = await Mosquitto.start();
});
afterAll(async () => {
  await broker.stop();
});

test("an MQTT source and its decoder report latency too", async () => {
  const t = testRuntime({ vars: { MQTT_SOURCE__LAT__SERVER: broker.url } });
  const mq = streams(`CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="lat/mq", CONF_KEY="lat")`);
  const rule = await t.rule({ id: "latmq", sql: "SELECT a FROM s", actions: [{ nop: {} }] }, mq).start();
  await waitFor(() => metric(rule, "source_s_0_connection_status") === 1, "connected");
  await waitFor(() => t.ready.includes("s"), "the source to subscribe");
  const pub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
  fakeClock(0.001);
  await pub.publishAsync("lat/mq", JSON.stringify({ a: 1 }), { qos: 1 });
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 1, "one result");
  for (const n of ["source_s", "op_2_decoder", "op_3_project"]) expect(metric(rule, `${n}_0_process_latency_us`) as number).toBeGreaterThan(0);
  performance.now = realNow;
  await rule.stop();
  await pub.endAsync();
});
