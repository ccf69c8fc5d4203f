/**
 * Acknowledged means durable: an httppush stream feeds a rule whose MQTT sink has the
 * offline cache on while its broker is down; every message the source answered `ok` to is in the
 * cache's disk pages, so after `kill -9` of the daemon, a restart and the broker's return, every
 * one of them is published — none lost, none counted lost. A windowed qos 1 rule beside it loses
 * what came after its last checkpoint (none was taken): exactly that is counted after the restart.
 */
import { afterAll, expect, test } from "bun:test";
import mqtt from "mqtt";
import { freePort as freeDataPort } from "../helpers/data-server.ts";
import { freePort, Mosquitto } from "../helpers/mosquitto.ts";
import { waitFor as waitForAt } from "../helpers/wait.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

const N = 3000;
let broker: Mosquitto | undefined;
let client: mqtt.MqttClient | undefined;
let d: DaemonProc | undefined;

afterAll(async () => {
  await client?.endAsync();
  if (d && d.proc.exitCode === null) await d.stop("SIGKILL");
  await broker?.stop();
});

const waitFor = (cond: () => boolean | Promise<boolean>, what: string | (() => string)) => waitForAt(cond, what, 20_000, 20);

async function status(p: DaemonProc, id: string): Promise<Record<string, unknown>> {
  const r = await p.call("GET", `/rules/${id}/status`);
  expect(r.status).toBe(200);
  return JSON.parse(r.text) as Record<string, unknown>;
}

test("every message httppush acknowledged while the sink's broker was down arrives after kill -9 and restart", async () => {
  broker = await Mosquitto.start();
  await broker.stop();
  const dataPort = freeDataPort();
  const dir = tempHome();
  const env = { KUIPER__SOURCE__HTTPSERVERPORT: String(dataPort) };
  d = await startFloe(dir, env);
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM inbox () WITH (TYPE="httppush", DATASOURCE="/inbox", FORMAT="json")' })).status).toBe(201);
  const rule = {
    id: "durable",
    sql: "SELECT n FROM inbox",
    actions: [{ mqtt: { server: broker.url, topic: "durable/out", qos: 1, sendSingle: true, enableCache: true, resendInterval: 20 } }],
  };
  expect((await d.call("POST", "/rules", rule)).status).toBe(201);
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM winbox () WITH (TYPE="httppush", DATASOURCE="/winbox", FORMAT="json")' })).status).toBe(201);
  const windowed = {
    id: "windowed",
    sql: "SELECT count(*) AS c FROM winbox GROUP BY TUMBLINGWINDOW(ss, 3600)",
    options: { qos: 1, checkpointInterval: 3_600_000 },
    actions: [{ mqtt: { server: broker.url, topic: "durable/windows", qos: 1, enableCache: true } }],
  };
  expect((await d.call("POST", "/rules", windowed)).status).toBe(201);
  await waitFor(async () => (await status(d!, "durable")).source_inbox_0_connection_status === 1, "the httppush endpoint");
  await waitFor(async () => (await status(d!, "windowed")).source_winbox_0_connection_status === 1, "the second endpoint");
  let windowAcks = 0;
  for (let n = 0; n < 200; n++) {
    const res = await fetch(`http://127.0.0.1:${dataPort}/winbox`, { method: "POST", body: JSON.stringify({ n }) });
    if ((await res.text()) === "ok") windowAcks++;
  }
  expect(windowAcks).toBe(200);

  // Eight producers post concurrently; a message counts as acknowledged when answered `ok`.
  const acked: number[] = [];
  let next = 0;
  const url = `http://127.0.0.1:${dataPort}/inbox`;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let n = next++; n < N; n = next++) {
        const res = await fetch(url, { method: "POST", body: JSON.stringify({ n }) });
        if ((await res.text()) === "ok") acked.push(n);
      }
    }),
  );
  expect(acked.length).toBe(N);
  // Killed at once: the memory tier and the last partial page hold the newest items.
  expect(await d.stop("SIGKILL")).not.toBe(0);

  await broker.restart();
  const got = new Set<number>();
  let dups = 0;
  client = await mqtt.connectAsync(broker.url.replace("tcp:", "mqtt:"));
  await client.subscribeAsync("durable/out", { qos: 1 });
  client.on("message", (_t, p) => {
    const n = (JSON.parse(p.toString()) as { n: number }).n;
    if (got.has(n)) dups++;
    got.add(n);
  });
  // Restarted with Prometheus on the REST port, for the lost count's series.
  const rest = String(await freePort());
  d = await startFloe(dir, { ...env, KUIPER__BASIC__RESTPORT: rest, KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: rest });
  await waitFor(() => got.size === N, () => `all ${N} acknowledged messages (got ${got.size})`);
  expect([...got].sort((a, b) => a - b)).toEqual([...acked].sort((a, b) => a - b));
  // At least once: a page already sent when the process died may repeat, never more than one page.
  expect(dups).toBeLessThanOrEqual(256);
  await waitFor(async () => (await status(d!, "durable")).op_mqtt_0_2_cache_0_buffer_length === 0, "an empty cache");
  const st = await status(d, "durable");
  expect(st.sink_mqtt_0_0_buffer_length).toBe(0);
  expect(st.op_mqtt_0_2_cache_0_exceptions_total).toBe(0);
  expect(st.source_inbox_0_records_lost_total).toBe(0);
  // The open window held all 200 and no checkpoint had been taken: all 200 counted, and logged.
  expect((await status(d, "windowed")).source_winbox_0_records_lost_total).toBe(200);
  expect((await d.call("GET", "/metrics")).text).toContain('kuiper_source_records_lost_total{op="winbox",op_instance="0",rule="windowed",type="source"} 200');
  expect(d.stderr()).toContain(
    "rule windowed: 200 message(s) of stream winbox acknowledged before the last stop were lost",
  );
}, 60_000);

test("MQTT messages at qos 1 the source acknowledged reach a sink whose broker was down, across kill -9", async () => {
  const M = 2000;
  const src = await Mosquitto.start();
  const sink = await Mosquitto.start();
  await sink.stop();
  const dir = tempHome();
  let p: DaemonProc | undefined = await startFloe(dir);
  const pub = await mqtt.connectAsync(src.url.replace("tcp:", "mqtt:"));
  let sub: mqtt.MqttClient | undefined;
  try {
    expect((await p.call("PUT", "/metadata/sources/mqtt/confKeys/src", { server: src.url, qos: 1 })).status).toBe(200);
    expect((await p.call("POST", "/streams", { sql: 'CREATE STREAM m () WITH (DATASOURCE="kill/in", FORMAT="json", CONF_KEY="src")' })).status).toBe(201);
    const r = { id: "fwd", sql: "SELECT n FROM m", actions: [{ mqtt: { server: sink.url, topic: "kill/out", qos: 1, sendSingle: true, enableCache: true } }] };
    expect((await p.call("POST", "/rules", r)).status).toBe(201);
    await waitFor(async () => (await status(p!, "fwd")).source_m_0_connection_status === 1, "the source's subscription");
    for (let n = 0; n < M; n++) await pub.publishAsync("kill/in", JSON.stringify({ n }), { qos: 1 });
    await waitFor(async () => (await status(p!, "fwd")).source_m_0_records_in_total === M, `all ${M} taken`);
    expect(await p.stop("SIGKILL")).not.toBe(0);

    await sink.restart();
    const got = new Set<number>();
    sub = await mqtt.connectAsync(sink.url.replace("tcp:", "mqtt:"));
    await sub.subscribeAsync("kill/out", { qos: 1 });
    sub.on("message", (_t, b) => got.add((JSON.parse(b.toString()) as { n: number }).n));
    p = await startFloe(dir);
    await waitFor(() => got.size === M, () => `all ${M} (got ${got.size})`);
    expect((await status(p, "fwd")).source_m_0_records_lost_total).toBe(0);
  } finally {
    await pub.endAsync();
    await sub?.endAsync();
    if (p.proc.exitCode === null) await p.stop("SIGKILL");
    await src.stop();
    await sink.stop();
  }
}, 60_000);
