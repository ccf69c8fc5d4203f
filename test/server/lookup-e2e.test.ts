/**
 * Lookup tables through the daemon (sql.md §12.5, rules-and-sinks.md §10.3): a memory lookup
 * table created over REST, fed by one rule's memory sink and joined by another rule, with MQTT
 * in and out through a real broker.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import mqtt from "mqtt";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { waitFor } from "../helpers/wait.ts";
import { startFloe, type DaemonProc } from "./daemon.ts";

let broker: Mosquitto;
let client: mqtt.MqttClient;
const received: string[] = [];
let d: DaemonProc | undefined;

beforeAll(async () => {
  broker = await Mosquitto.start();
  client = await mqtt.connectAsync(broker.url.replace("tcp:", "mqtt:"));
  await client.subscribeAsync("lk/out", { qos: 1 });
  client.on("message", (_t, p) => received.push(p.toString()));
});

afterAll(async () => {
  await client?.endAsync();
  if (d && d.proc.exitCode === null) await d.stop();
  await broker?.stop();
});

test("REST: a memory lookup table fed by a rule's memory sink joins another rule's MQTT stream", async () => {
  d = await startFloe();
  expect((await d.call("PUT", "/metadata/sources/mqtt/confKeys/lk", { server: broker.url, qos: 1 })).status).toBe(200);
  for (const sql of [
    'CREATE STREAM devin () WITH (DATASOURCE="lk/devices", FORMAT="json", CONF_KEY="lk")',
    'CREATE STREAM events () WITH (DATASOURCE="lk/events", FORMAT="json", CONF_KEY="lk")',
  ])
    expect((await d.call("POST", "/streams", { sql })).status).toBe(201);
  const table = await d.call("POST", "/tables", { sql: 'CREATE TABLE devices () WITH (TYPE="memory", KIND="lookup", DATASOURCE="lk/table", KEY="id")' });
  expect([table.status, table.text]).toEqual([201, "Table devices is created."]);
  expect(JSON.parse((await d.call("GET", "/tables?kind=lookup")).text)).toEqual(["devices"]);

  const feed = { id: "feed", sql: "SELECT * FROM devin", actions: [{ memory: { topic: "lk/table" } }] };
  expect((await d.call("POST", "/rules", feed)).status).toBe(201);
  const join = {
    id: "join",
    sql: "SELECT events.id, events.v, devices.name FROM events LEFT JOIN devices ON events.id = devices.id",
    actions: [{ mqtt: { server: broker.url, topic: "lk/out", qos: 1, sendSingle: true } }],
  };
  const r = await d.call("POST", "/rules", join);
  expect([r.status, r.text]).toEqual([201, "Rule join was created successfully."]);

  // The rules subscribe asynchronously: republish the device row and an event until an event finds
  // the row (an event that overtook the row of its round finds the row of the round before).
  await waitFor(async () => {
    if (received.some((s) => s.includes("pump"))) return true;
    await client.publishAsync("lk/devices", JSON.stringify({ id: 7, name: "pump" }), { qos: 1 });
    await client.publishAsync("lk/events", JSON.stringify({ id: 7, v: 1 }), { qos: 1 });
    return false;
  }, "an event joined with the device row", 10_000, 100);
  expect(received.map((s) => JSON.parse(s))).toContainEqual({ id: 7, v: 1, name: "pump" });
  await client.publishAsync("lk/events", JSON.stringify({ id: 8, v: 2 }), { qos: 1 });
  await waitFor(() => received.some((s) => s.includes('"v":2')), "the second event's result", 5000, 50);
  expect(received.map((s) => JSON.parse(s))).toContainEqual({ id: 8, v: 2 });

  const st = JSON.parse((await d.call("GET", "/rules/join/status")).text) as Record<string, unknown>;
  expect(st.status).toBe("running");
  expect(st.op_devices_0_records_in_total as number).toBeGreaterThan(0);
  expect(st.source_devices_0_records_in_total).toBeUndefined();
  const topo = JSON.parse((await d.call("GET", "/rules/join/topo")).text) as { sources: string[]; edges: Record<string, string[]> };
  expect(topo.sources).toEqual(["source_events"]);
  expect(topo.edges.op_2_decoder).toEqual(["op_devices"]);

  const bad = await d.call("POST", "/rules", { id: "bad", sql: "SELECT * FROM events INNER JOIN devices ON events.id > devices.id", actions: [{ nop: {} }] });
  expect(bad.status).toBe(400);
  expect(bad.text).toContain("join condition binaryExpr:{ events.id > devices.id } is invalid, at least one equi-join predicate is required");
}, 30_000);
