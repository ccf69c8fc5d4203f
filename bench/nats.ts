/**
 * NATS connector throughput, in-process (one rule, a nats-server of its own):
 *   core      core subject → `SELECT *` → nop
 *   js-take   JetStream durable (acknowledged when taken) → `SELECT *` → nop
 *   js-sink   the same JetStream stream (another durable) → `SELECT *` → JetStream sink (Nats-Msg-Id,
 *             awaiting stream acks)
 * Messages are published before the rule starts where the source allows it (JetStream), so the
 * figure is the consumer's rate, not the publisher's.
 *
 *   node_modules/.bin/bun bench/nats.ts [--n 100000] [--ack-policy explicit|all] [--qos 0|1|2] [--cases core,js-take,js-sink]
 *
 * `--qos` is the rules' qos (1: checkpoints, whose barrier waits for the JetStream sink's
 * acknowledgements); `--cases` runs only those (js-sink reads the stream js-take fills).
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { NatsServer } from "../test/helpers/nats.ts";
import type { RunHandle } from "../lib/runtime/rule.ts";
import { metric, streams, testRuntime, waitFor } from "../test/helpers/runtime.ts";

const { values } = parseArgs({
  options: { n: { type: "string", default: "100000" }, "ack-policy": { type: "string", default: "explicit" }, qos: { type: "string", default: "0" }, cases: { type: "string", default: "core,js-take,js-sink" } },
});
const N = Number(values.n);
const QOS = Number(values.qos);
const CASES = new Set(values.cases!.split(","));
const server = await NatsServer.start();
const nc = await connect({ servers: server.url });
const jsm = await jetstreamManager(nc);
const js = jetstream(nc);
const vars: Record<string, string> = { NATS__DEFAULT__SERVER: server.url, NATS__JS__STREAM: "B", NATS__JS__DURABLE: "bench", NATS__JS__ACKPOLICY: values["ack-policy"]!, NATS__JS2__STREAM: "B", NATS__JS2__DURABLE: "bench2" };
const payload = (i: number) => JSON.stringify({ device: `d${i % 100}`, temperature: 20 + (i % 17), n: i });

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function run(name: string, setup: () => Promise<void>, stream: string, actions: unknown[], feed: () => Promise<void>, done: (r: RunHandle) => boolean): Promise<void> {
  await setup();
  if (!CASES.has(name)) return;
  const t = testRuntime({ vars });
  const ruleDef = t.rule({ id: name, sql: "SELECT * FROM s", actions, options: { qos: QOS } }, streams(stream));
  const t0 = performance.now();
  const c0 = cpuMs();
  const rule = await ruleDef.start();
  await feed();
  await waitFor(() => done(rule), `${name} done`, 300_000);
  const ms = performance.now() - t0;
  const cpu = cpuMs() - c0;
  console.log(`${name.padEnd(8)} ${N} msgs in ${ms.toFixed(0)} ms: ${Math.round((N / ms) * 1000).toLocaleString("en")} msg/s, ${((cpu * 1000) / N).toFixed(2)} µs CPU/msg (process, incl. publisher)`);
  await rule.stop();
}

console.log(`load ${loadavg()[0]!.toFixed(1)}, nats-server ${server.url}`);

await run(
  "core",
  async () => {},
  `CREATE STREAM s () WITH (TYPE="nats", DATASOURCE="bench.core")`,
  [{ nop: {} }],
  async () => {
    await Bun.sleep(100);
    for (let i = 0; i < N; i++) {
      nc.publish("bench.core", payload(i));
      if ((i & 1023) === 1023) await nc.flush();
    }
  },
  (r) => (metric(r, "source_s_0_records_in_total") as number) + (metric(r, "source_s_0_exceptions_total") as number) >= N || (metric(r, "source_s_0_records_in_total") as number) >= N,
);

await run(
  "js-take",
  async () => {
    await jsm.streams.add({ name: "B", subjects: ["bench.js"] });
    const pubs: Promise<unknown>[] = [];
    for (let i = 0; i < N; i++) {
      pubs.push(js.publish("bench.js", payload(i)));
      if (pubs.length >= 512) await Promise.all(pubs.splice(0));
    }
    await Promise.all(pubs);
  },
  `CREATE STREAM s () WITH (TYPE="nats", DATASOURCE="bench.js", CONF_KEY="js")`,
  [{ nop: {} }],
  async () => {},
  (r) => (metric(r, "source_s_0_records_in_total") as number) >= N,
);
if (CASES.has("js-take")) {
  const ci = await jsm.consumers.info("B", "bench");
  console.log(`         after the run: ack floor ${ci.ack_floor.stream_seq}, ack pending ${ci.num_ack_pending}`);
}

await run(
  "js-sink",
  async () => {
    await jsm.streams.add({ name: "OUTB", subjects: ["bench.out"] });
  },
  `CREATE STREAM s () WITH (TYPE="nats", DATASOURCE="bench.js", CONF_KEY="js2")`,
  [{ nats: { subject: "bench.out", jetstream: true, sendSingle: true, server: server.url } }],
  async () => {},
  (r) => (metric(r, "sink_nats_0_0_records_out_total") as number) >= N,
);
await Bun.sleep(200);
if (CASES.has("js-sink")) console.log(`         stream OUTB holds ${(await jsm.streams.info("OUTB")).state.messages}`);

await nc.close();
await server.stop();
