/**
 * eKuiper 2.x named connections over REST, against a real Mosquitto: a source confKey that only
 * selects a connection, a SHARED stream on it whose source node is `<connection>/<confKey>` and
 * keeps counting while any rule holds it, and a lost broker that reads `connecting` while retried.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connectAsync, type MqttClient } from "mqtt";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, type DaemonProc } from "./daemon.ts";

let d: DaemonProc;
let broker: Mosquitto;
let pub: MqttClient;

beforeAll(async () => {
  [d, broker] = await Promise.all([startFloe(), Mosquitto.start()]);
  pub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
});

afterAll(async () => {
  await pub?.endAsync(true);
  await d?.stop();
  await broker?.stop();
});

const status = async (id: string) => JSON.parse((await d.call("GET", `/rules/${id}/status`)).text) as Record<string, number | string>;
const NODE = "source_conn1/ttt_0_";

async function publish(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await pub.publishAsync("nc/in", JSON.stringify({ n: i }), { qos: 1 });
}

test("two rules on a shared stream over a named connection report the one shared source node", async () => {
  expect((await d.call("POST", "/connections", { id: "conn1", typ: "mqtt", props: { server: broker.url } })).status).toBe(201);
  expect((await d.call("PUT", "/metadata/sources/mqtt/confKeys/ttt", { connectionSelector: "conn1" })).status).toBe(200);
  const s = await d.call("POST", "/streams", { sql: 'CREATE STREAM sh () WITH (DATASOURCE="nc/in", CONF_KEY="ttt", SHARED="true", TYPE="mqtt")' });
  expect([s.status, s.text]).toEqual([201, "Stream sh is created."]);
  expect((await d.call("POST", "/rules", { id: "r1", sql: "SELECT * FROM sh", actions: [{ nop: {} }] })).status).toBe(201);
  await waitFor(async () => (await status("r1"))[NODE + "connection_status"] === 1, "r1's source connected");
  // The subscription is made after the connection: publish until the first message is counted.
  await waitFor(async () => (await publish(1), ((await status("r1"))[NODE + "records_in_total"] as number) > 0), "the subscription", 10_000, 100);
  const first = (await status("r1"))[NODE + "records_in_total"] as number;
  const connectedAt = (await status("r1"))[NODE + "connection_last_connected_time"] as number;
  expect(connectedAt).toBeGreaterThan(0);

  // A rule joining the open source shows its real connection time and what it counted so far.
  expect((await d.call("POST", "/rules", { id: "r2", sql: "SELECT n FROM sh", actions: [{ nop: {} }] })).status).toBe(201);
  await waitFor(async () => (await status("r2"))[NODE + "connection_status"] === 1, "r2 attached");
  const r2 = await status("r2");
  expect([r2[NODE + "connection_last_connected_time"], r2[NODE + "records_in_total"]]).toEqual([connectedAt, first]);
  expect(Object.keys(r2).some((k) => k.startsWith("source_sh_"))).toBe(false);

  // Each message counts once on the shared node, whichever rule's status shows it.
  await publish(2);
  await waitFor(async () => (await status("r2"))["op_3_project_0_records_in_total"] === 2, "r2 got both");
  await waitFor(async () => (await status("r1"))[NODE + "records_in_total"] === first + 2, "the node counted both once");
  expect((await status("r2"))[NODE + "records_in_total"]).toBe(first + 2);

  // The rule it counted through stops: the node keeps counting for r2, and r1 comes back to it.
  expect((await d.call("POST", "/rules/r1/stop")).status).toBe(200);
  await publish(1);
  await waitFor(async () => (await status("r2"))[NODE + "records_in_total"] === first + 3, "counting through r2");
  expect((await d.call("POST", "/rules/r1/start")).status).toBe(200);
  await waitFor(async () => (await status("r1")).status === "running", "r1 running again");
  expect((await status("r1"))[NODE + "records_in_total"]).toBe(first + 3);
});

test("while a lost broker is retried, the connection and the nodes on it read connecting", async () => {
  await broker.stop();
  const lostAt = async () => (await status("r2"))[NODE + "connection_last_disconnected_time"] as number;
  await waitFor(async () => (await lostAt()) > 0, "the loss seen");
  await waitFor(async () => ((await status("r2"))[NODE + "connection_last_try_time"] as number) > (await lostAt()), "a failed reconnection attempt", 10_000, 50);
  const conn = JSON.parse((await d.call("GET", "/connections/conn1")).text) as Record<string, unknown>;
  expect([conn.status, conn.err]).toEqual(["connecting", `network Error : dial tcp 127.0.0.1:${broker.port}: connect: connection refused`]);
  const st = await status("r2");
  expect([st[NODE + "connection_status"], st[NODE + "exceptions_total"]]).toEqual([0, 1]);
  await broker.restart();
  await waitFor(async () => (await status("r2"))[NODE + "connection_status"] === 1, "reconnected", 15_000, 100);
}, 30_000);
