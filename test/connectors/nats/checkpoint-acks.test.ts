/**
 * How a JetStream source acknowledges at checkpoints (lib/connectors/nats/source.ts): a consumer it
 * creates for that is AckAll, so one acknowledgement covers a checkpoint's messages; a consumer
 * that exists keeps its own policy, and the source follows it; `ackPolicy` set is used as given.
 * Against a real nats-server; the acknowledgements are counted on `$JS.ACK.<stream>.>`.
 */
import { expect, test } from "bun:test";
import { AckPolicy, jetstream } from "@nats-io/jetstream";
import { jetStreamFixture } from "../../helpers/nats.ts";
import { metric, streams, testRuntime, waitFor } from "../../helpers/runtime.ts";

const fx = jetStreamFixture();

const vars: Record<string, string> = {};
let keys = 0;
function conf(props: Record<string, string | number>): string {
  const key = `a${++keys}`;
  vars[`NATS__${key.toUpperCase()}__SERVER`] = fx.server.url;
  for (const [k, v] of Object.entries(props)) vars[`NATS__${key.toUpperCase()}__${k.toUpperCase()}`] = String(v);
  return `CONF_KEY="${key}"`;
}

/** Counts the acknowledgement messages sent to `stream`'s consumers (by their body: +ACK, +WPI, …). */
function acks(stream: string): Map<string, number> {
  const n = new Map<string, number>();
  fx.nc.subscribe(`$JS.ACK.${stream}.>`, { callback: (_e, m) => void n.set(m.string(), (n.get(m.string()) ?? 0) + 1) });
  return n;
}

/**
 * A windowed rule with checkpoints (acknowledging at checkpoints) reads 50 messages of `stream`
 * through durable `durable`; its one checkpoint is the final one at stop. Returns the consumer
 * after the stop and the acknowledgements sent; `setup` runs once the stream exists.
 */
async function readFifty(stream: string, durable: string, props: Record<string, string | number> = {}, setup: () => Promise<unknown> = async () => {}) {
  const subject = `${stream.toLowerCase()}.in`;
  await fx.jsm.streams.add({ name: stream, subjects: [subject] });
  await setup();
  const sent = acks(stream);
  const js = jetstream(fx.nc);
  const t = testRuntime({ vars });
  const defs = streams(`CREATE STREAM c () WITH (TYPE="nats", DATASOURCE="${subject}", ${conf({ durable, ...props })})`);
  const rule = await t
    .rule({ id: `r${stream}`, sql: "SELECT count(*) AS c FROM c GROUP BY TUMBLINGWINDOW(ss, 3600)", options: { qos: 1, checkpointInterval: 3_600_000, enableSaveStateBeforeStop: true }, actions: [{ nop: {} }] }, defs)
    .start();
  for (let i = 0; i < 50; i++) await js.publish(subject, JSON.stringify({ n: i }));
  await waitFor(() => metric(rule, "source_c_0_records_in_total") === 50, "50 taken");
  const before = await fx.jsm.consumers.info(stream, durable);
  await rule.stop();
  await fx.nc.flush();
  const after = await fx.jsm.consumers.info(stream, durable);
  return { before, after, acks: sent.get("+ACK") ?? 0 };
}

test("a consumer created to acknowledge at checkpoints is AckAll: the checkpoint's messages are acknowledged with one +ACK", async () => {
  const r = await readFifty("AA1", "aa1");
  expect(r.after.config.ack_policy).toBe(AckPolicy.All);
  // Nothing acknowledged until the checkpoint stored them, then all of them at once.
  expect([r.before.num_ack_pending, r.before.ack_floor.stream_seq]).toEqual([50, 0]);
  expect([r.after.num_ack_pending, r.after.ack_floor.stream_seq, r.after.num_redelivered]).toEqual([0, 50, 0]);
  expect(r.acks).toBe(1);
});

test("an existing durable keeps its explicit policy and the source acknowledges each message", async () => {
  const r = await readFifty("AA2", "aa2", {}, () => fx.jsm.consumers.add("AA2", { durable_name: "aa2", ack_policy: AckPolicy.Explicit, filter_subject: "aa2.in" }));
  expect(r.after.config.ack_policy).toBe(AckPolicy.Explicit);
  expect([r.after.num_ack_pending, r.after.ack_floor.stream_seq]).toEqual([0, 50]);
  expect(r.acks).toBe(50);
});

test("ackPolicy explicit is used as given", async () => {
  const r = await readFifty("AA3", "aa3", { ackPolicy: "explicit" });
  expect(r.after.config.ack_policy).toBe(AckPolicy.Explicit);
  expect([r.after.num_ack_pending, r.after.ack_floor.stream_seq]).toEqual([0, 50]);
  expect(r.acks).toBe(50);
});
