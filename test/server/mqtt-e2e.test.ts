/**
 * End to end through a real broker: a stream and a rule created over REST, messages published
 * to mosquitto, results read back from it; then the daemon is restarted (SIGTERM, then kill -9)
 * and the definitions come back with the rule running again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import mqtt from "mqtt";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { waitFor, waitForValue } from "../helpers/wait.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

let broker: Mosquitto;
let client: mqtt.MqttClient;
const received: string[] = [];
let d: DaemonProc | undefined;
const dir = tempHome();

beforeAll(async () => {
  broker = await Mosquitto.start();
  client = await mqtt.connectAsync(broker.url.replace("tcp:", "mqtt:"));
  await client.subscribeAsync("e2e/out", { qos: 1 });
  client.on("message", (_t, p) => received.push(p.toString()));
});

afterAll(async () => {
  await client?.endAsync();
  if (d && d.proc.exitCode === null) await d.stop();
  await broker?.stop();
});

/** Publishes until the rule's output shows up (the rule's subscription is asynchronous). */
async function roundTrip(value: number): Promise<unknown> {
  const want = (s: string) => (JSON.parse(s) as { v?: number }[]).some((r) => r.v === value * 10);
  const hit = await waitForValue(async () => {
    const found = received.find(want);
    if (found === undefined) await client.publishAsync("e2e/in", JSON.stringify({ v: value, noise: "x" }), { qos: 1 });
    return found;
  }, () => `the output for ${value} (got ${JSON.stringify(received)})`, 8000, 100);
  return JSON.parse(hit);
}

async function status(p: DaemonProc, id: string): Promise<Record<string, unknown>> {
  const r = await p.call("GET", `/rules/${id}/status`);
  expect(r.status).toBe(200);
  return JSON.parse(r.text) as Record<string, unknown>;
}

// bun test ends the processes a test spawned when the test ends: each test restarts the daemon.
test("stream + rule over REST move MQTT messages through a real broker; trial runs stream SSE", async () => {
  d = await startFloe(dir);
  expect((await d.call("PUT", "/metadata/sources/mqtt/confKeys/e2e", { server: broker.url, qos: 1 })).status).toBe(200);
  const s = await d.call("POST", "/streams", { sql: 'CREATE STREAM e2e (v bigint) WITH (DATASOURCE="e2e/in", FORMAT="json", CONF_KEY="e2e")' });
  expect([s.status, s.text]).toEqual([201, "Stream e2e is created."]);
  const rule = { id: "e2e", sql: "SELECT v * 10 AS v FROM e2e WHERE v > 0", actions: [{ mqtt: { server: broker.url, topic: "e2e/out", qos: 1 } }] };
  const r = await d.call("POST", "/rules", rule);
  expect([r.status, r.text]).toEqual([201, "Rule e2e was created successfully."]);
  expect(await roundTrip(4)).toEqual([{ v: 40 }]);
  const st = await status(d, "e2e");
  expect(st.status).toBe("running");
  expect(st.source_e2e_0_records_in_total as number).toBeGreaterThan(0);
  expect(st.sink_mqtt_0_0_records_out_total as number).toBeGreaterThan(0);
  const stopped = await d.call("POST", "/rules/e2e/stop");
  expect(stopped.text).toBe("Rule e2e was stopped.");
  expect((await status(d, "e2e")).status).toBe("stopped");
  expect((await d.call("POST", "/rules/e2e/start")).text).toBe("Rule e2e was started");

  // Named connections are live clients with a status.
  expect((await d.call("POST", "/connections", { id: "up", typ: "mqtt", props: { server: broker.url } })).status).toBe(201);
  let conn: Record<string, unknown> = {};
  const connection = async () => (conn = JSON.parse((await d!.call("GET", "/connections/up")).text) as Record<string, unknown>);
  await waitFor(async () => (await connection()).status === "connected", "the named connection to connect", 3000, 20);
  expect(conn).toEqual({ id: "up", typ: "mqtt", props: { server: broker.url }, isNamed: true, status: "connected" });

  // A stream (through its source confKey) and a sink select it: both share its client.
  expect((await d.call("PUT", "/metadata/sources/mqtt/confKeys/viaup", { server: broker.url, connectionSelector: "up" })).status).toBe(200);
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM viaup (v bigint) WITH (DATASOURCE="up/in", FORMAT="json", CONF_KEY="viaup")' })).status).toBe(201);
  const up1 = { id: "up1", sql: "SELECT v * 100 AS v FROM viaup", actions: [{ mqtt: { connectionSelector: "up", topic: "e2e/out", qos: 1 } }] };
  expect((await d.call("POST", "/rules", up1)).status).toBe(201);
  await waitFor(async () => (await connection()).refCount === 2, "both nodes to hold the connection", 3000, 20);
  expect(conn).toEqual({ id: "up", typ: "mqtt", props: { server: broker.url }, isNamed: true, status: "connected", refCount: 2 });
  received.length = 0;
  await waitFor(async () => {
    if (received.some((m) => m.includes('"v":2100'))) return true;
    await client.publishAsync("up/in", JSON.stringify({ v: 21 }), { qos: 1 });
    return false;
  }, "the output through the named connection", 8000, 100);
  expect(received).toContain('[{"v":2100}]');
  const st1 = await status(d, "up1");
  expect([st1.source_viaup_0_connection_status, st1.sink_mqtt_0_0_connection_status]).toEqual([1, 1]);
  const refused = await d.call("DELETE", "/connections/up");
  expect([refused.status, refused.text]).toEqual([400, '{"error":1000,"message":"drop connection failed: connection up can\'t be dropped due to rule references [up1_mqtt_0_0 up1_viaup_0]"}\n']);
  expect((await d.call("POST", "/rules/up1/stop")).status).toBe(200);
  expect(JSON.parse((await d.call("GET", "/connections/up")).text).refCount).toBeUndefined();
  expect((await d.call("DELETE", "/rules/up1")).status).toBe(200);
  expect((await d.call("DELETE", "/streams/viaup")).status).toBe(200);

  // A trial run streams its results as server-sent events.
  const trial = await d!.call("POST", "/ruletest", { id: "tr", sql: "SELECT v + 1 AS w FROM e2e" });
  expect(trial.status).toBe(200);
  const { id, port } = JSON.parse(trial.text) as { id: string; port: number };
  expect(id).toBe("tr");
  const res = await fetch(`http://127.0.0.1:${port}/test/tr`);
  expect(res.headers.get("Content-Type")).toBe("text/event-stream");
  expect((await d!.call("POST", "/ruletest/tr/start")).text).toBe("Test rule tr was started");
  const reader = res.body!.getReader();
  let text = "";
  const pump = (async () => {
    while (!text.includes('"w":8')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
  })();
  await waitFor(async () => {
    if (text.includes('"w":8')) return true;
    await client.publishAsync("e2e/in", JSON.stringify({ v: 7 }), { qos: 1 });
    return false;
  }, "the trial's result", 8000, 100);
  await pump;
  expect(text).toContain('data: [{"w":8}]\n\n');
  expect((await d!.call("DELETE", "/ruletest/tr")).text).toBe("Test rule tr was stopped.");
}, 30_000);

/** The daemon of the earlier test stops (gracefully) before another starts on the same directory. */
async function restart(): Promise<DaemonProc> {
  if (d && d.proc.exitCode === null) await d.stop();
  return (d = await startFloe(dir));
}

test("after SIGTERM the daemon restores the stream, the confKey and the running rule", async () => {
  d = await restart();
  expect(await d.stop("SIGTERM")).toBe(0);
  d = await startFloe(dir);
  expect(JSON.parse((await d.call("GET", "/streams")).text)).toEqual(["e2e"]);
  expect((await d.call("GET", "/metadata/sources/yaml/mqtt")).text).toContain('"e2e"');
  received.length = 0;
  expect(await roundTrip(5)).toEqual([{ v: 50 }]);
  expect((await status(d, "e2e")).status).toBe("running");
}, 30_000);

test("after kill -9 nothing acknowledged is lost and the rule runs again", async () => {
  d = await restart();
  // Acknowledged just before the kill: a second rule and a stopped third one.
  const r2 = { id: "e2e_b", sql: "SELECT v FROM e2e", actions: [{ nop: {} }] };
  expect((await d!.call("POST", "/rules", r2)).status).toBe(201);
  expect((await d!.call("POST", "/rules", { id: "e2e_c", sql: "SELECT v FROM e2e", actions: [{ nop: {} }], triggered: false })).status).toBe(201);
  expect(await d!.stop("SIGKILL")).not.toBe(0);
  d = await startFloe(dir);
  const list = JSON.parse((await d.call("GET", "/rules")).text) as { id: string; status: string }[];
  expect(list.map((r) => [r.id, r.status])).toEqual([
    ["e2e", "running"],
    ["e2e_b", "running"],
    ["e2e_c", "stopped"],
  ]);
  received.length = 0;
  expect(await roundTrip(6)).toEqual([{ v: 60 }]);
}, 30_000);
