/**
 * Scaling a partitioned rule over a floe group (issue 14, README "Scaling out"): a NATS server
 * with JetStream for the group, a mosquitto broker for the data, and 1, 2, 3 … `floe serve`
 * members of one group. On one member it creates a stream over the 12-partition topic
 * `bench/{partition}/<device>` and the rule
 *   SELECT deviceId, count(*) AS n, avg(v) AS a FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)
 * then publishes M messages of D devices (each device always in the same partition) at QoS 0
 * (`--qos 1`: acknowledged, slower to publish) and times until the group's aggregated
 * `records_in_total` reaches M (or stops growing for 5 s: QoS 0 may drop, the count is printed). Prints, per member count, the
 * throughput and its ratio to one member.
 *
 *   node_modules/.bin/bun bench/cluster.ts [--members 1,2,3] [--messages 60000] [--devices 1000] [--qos 0|1] [--json FILE]
 *
 * Over MQTT, not yet the JetStream scenario with a kill -9 and an exact comparison with
 * `floe run --replay`: that needs the `nats` source and sink (README "Scaling out", not there yet).
 * One process publishes, so the publisher's rate caps what is measured; it is printed too.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import mqtt from "mqtt";
import { Mosquitto } from "../test/helpers/mosquitto.ts";
import { NatsServer } from "../test/helpers/nats.ts";
import { startFloe, tempHome, type DaemonProc } from "../test/server/daemon.ts";

const { values } = parseArgs({
  options: {
    members: { type: "string", default: "1,2,3" },
    messages: { type: "string", default: "60000" },
    devices: { type: "string", default: "1000" },
    qos: { type: "string", default: "0" },
    json: { type: "string" },
  },
});
const MEMBERS = values.members!.split(",").map(Number);
const M = Number(values.messages);
const D = Number(values.devices);
const P = 12;
const QOS = Number(values.qos) as 0 | 1;

async function until(fn: () => Promise<boolean>, ms: number): Promise<void> {
  const t0 = Date.now();
  while (!(await fn())) {
    if (Date.now() - t0 > ms) throw new Error(`not reached within ${ms} ms`);
    await Bun.sleep(50);
  }
}

async function json<T>(d: DaemonProc, path: string): Promise<T> {
  return JSON.parse((await d.call("GET", path)).text) as T;
}

/** One run with `n` members: messages per second through the group, and the publisher's rate. */
async function run(n: number, nats: NatsServer, broker: Mosquitto): Promise<{ members: number; seconds: number; rate: number; publishRate: number; received: number }> {
  const group = `bench${n}_${Date.now().toString(36)}`;
  const floes: DaemonProc[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const env = { KUIPER__CLUSTER__NATS: nats.url, KUIPER__CLUSTER__GROUP: group, KUIPER__CLUSTER__INSTANCE: `m${i}`, KUIPER__CLUSTER__PARTITIONS: String(P) };
      floes.push(await startFloe(tempHome(), env));
    }
    const a = floes[0]!;
    await until(async () => (await json<{ instances: { live: boolean }[] }>(a, "/cluster")).instances.filter((x) => x.live).length === n, 20_000);
    await a.call("PUT", "/metadata/sources/mqtt/confKeys/b", { server: broker.url, qos: QOS });
    await a.call("POST", "/streams", { sql: 'CREATE STREAM s (deviceId string, v float) WITH (TYPE="mqtt", DATASOURCE="bench/{partition}/+", CONF_KEY="b", EXTRA="{\\"partitionKey\\":\\"deviceId\\"}")' });
    const rule = { id: "r", sql: "SELECT deviceId, count(*) AS n, avg(v) AS a FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)", actions: [{ nop: {} }] };
    const r = await a.call("POST", "/rules", rule);
    if (r.status !== 201) throw new Error(`rule: ${r.text}`);
    // Every partition runs somewhere and every run is subscribed.
    await until(async () => {
      const runs = await Promise.all(floes.map((f) => json<{ partitionedRules: Record<string, number[]> }>(f, "/cluster")));
      if (runs.flatMap((v) => v.partitionedRules.r ?? []).length !== P) return false;
      const st = await json<Record<string, Record<string, number>>>(a, "/v2/rules/r/status?instance=all");
      return Object.values(st).every((s) => s.source_s_0_connection_status === undefined || s.source_s_0_connection_status === 1);
    }, 30_000);
    const client = await mqtt.connectAsync(broker.url.replace("tcp:", "mqtt:"));
    const t0 = performance.now();
    let inflight: Promise<unknown>[] = [];
    for (let i = 0; i < M; i++) {
      const d = i % D;
      inflight.push(client.publishAsync(`bench/${d % P}/d${d}`, `{"deviceId":"d${d}","v":${i % 100}}`, { qos: QOS }));
      if (inflight.length === 500) {
        await Promise.all(inflight);
        inflight = [];
      }
    }
    await Promise.all(inflight);
    const published = performance.now();
    // Until all arrived, or (QoS 0 may drop) nothing more arrived for 5 s.
    let received = 0;
    let last = performance.now();
    let done = performance.now();
    for (;;) {
      const got = (await json<Record<string, number>>(a, "/v2/rules/r/status")).source_s_0_records_in_total ?? 0;
      const now = performance.now();
      if (got > received) (received = got), (last = done = now);
      if (received >= M || now - last > 5000) break;
      await Bun.sleep(50);
    }
    const seconds = (done - t0) / 1000;
    await client.endAsync();
    return { members: n, seconds, rate: received / seconds, publishRate: M / ((published - t0) / 1000), received };
  } finally {
    for (const f of floes) await f.stop("SIGKILL");
  }
}

const nats = await NatsServer.start();
const broker = await Mosquitto.start();
const results: Awaited<ReturnType<typeof run>>[] = [];
try {
  for (const n of MEMBERS) {
    const res = await run(n, nats, broker);
    results.push(res);
    const base = results[0]!.rate;
    console.log(
      `members ${n}: ${res.received} of ${M} messages in ${res.seconds.toFixed(2)} s = ${Math.round(res.rate)} msg/s (×${(res.rate / base).toFixed(2)} of ${results[0]!.members}); publisher ${Math.round(res.publishRate)} msg/s; load ${loadavg()[0]!.toFixed(1)}`,
    );
  }
} finally {
  await broker.stop();
  await nats.stop();
}
if (values.json) writeFileSync(values.json, JSON.stringify({ messages: M, devices: D, partitions: P, results }, null, 2));
