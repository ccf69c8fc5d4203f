/**
 * The JetStream sink's default `Nats-Msg-Id` against a real nats-server: unique per emission (byte-
 * identical payloads of distinct emissions are all stored, as eKuiper's sink stores them), and the
 * same for an emission replayed after a restart from a checkpoint (the stream stores it once and
 * the sink counts the duplicate in its status).
 */
import { expect, test } from "bun:test";
import { jetstream } from "@nats-io/jetstream";
import { jetStreamFixture } from "../../helpers/nats.ts";
import { metric, streams, testRuntime, waitFor } from "../../helpers/runtime.ts";

const fx = jetStreamFixture();

async function storedCount(stream: string, want: number): Promise<number> {
  // Reaches `want` or stays below it: a wrongly deduplicated publish never arrives.
  await waitFor(async () => (await fx.jsm.streams.info(stream)).state.messages >= want, `${want} stored in ${stream}`, 5000).catch(() => undefined);
  return (await fx.jsm.streams.info(stream)).state.messages;
}

test("70 emissions carrying 7 distinct payloads: 70 stored, none counted as a duplicate", async () => {
  await fx.jsm.streams.add({ name: "SEVEN", subjects: ["seven.>"] });
  const t = testRuntime();
  const defs = streams(`CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="seven-in")`);
  const rule = await t.rule({ id: "seven", sql: "SELECT v FROM m", actions: [{ nats: { server: fx.server.url, subject: "seven.out", jetstream: true, sendSingle: true } }] }, defs).start();
  try {
    await waitFor(() => metric(rule, "sink_nats_0_0_connection_status") === 1, "sink connected");
    for (let i = 0; i < 70; i++) await t.env.pubsub.publish("seven-in", { v: i % 7 });
    await waitFor(() => metric(rule, "sink_nats_0_0_records_out_total") === 70, "70 publishes");
    expect(await storedCount("SEVEN", 70)).toBe(70);
    expect(metric(rule, "sink_nats_0_0_duplicates_total")).toBe(0);
  } finally {
    await rule.stop();
  }
});

test("an emission replayed after a restart from a checkpoint keeps its id: stored once, counted as a duplicate", async () => {
  await fx.jsm.streams.add({ name: "RIN", subjects: ["rin"] });
  await fx.jsm.streams.add({ name: "ROUT", subjects: ["rout"] });
  const js = jetstream(fx.nc);
  const t = testRuntime({ vars: { NATS__RP__SERVER: fx.server.url, NATS__RP__DURABLE: "rp", NATS__RP__ACKWAIT: "1s" } });
  const defs = streams(`CREATE STREAM r () WITH (TYPE="nats", DATASOURCE="rin", CONF_KEY="rp")`);
  // Every emission is the same bytes: only the id tells them apart. COUNTWINDOW(1) keeps the rule
  // stateful, so messages are acknowledged by checkpoints only.
  const def = (saveAtStop: boolean) => ({
    id: "replay",
    sql: "SELECT v FROM r GROUP BY COUNTWINDOW(1)",
    options: { qos: 1, checkpointInterval: 3_600_000, enableSaveStateBeforeStop: saveAtStop },
    actions: [{ nats: { server: fx.server.url, subject: "rout", jetstream: true, sendSingle: true } }],
  });
  const publish = async (n: number) => {
    for (let i = 0; i < n; i++) await js.publish("rin", JSON.stringify({ v: 1 }));
  };
  // Run 1: five emissions, then a checkpoint at the stop (they are acknowledged).
  let rule = await t.rule(def(true), defs).start();
  await publish(5);
  await waitFor(() => metric(rule, "sink_nats_0_0_records_out_total") === 5, "5 publishes");
  await rule.stop();
  expect(await storedCount("ROUT", 5)).toBe(5);
  // Run 2, from that checkpoint: five more, then it ends without a checkpoint (a crash): not acknowledged.
  rule = await t.rule(def(false), defs).start();
  await publish(5);
  await waitFor(() => metric(rule, "sink_nats_0_0_records_out_total") === 5, "5 more publishes");
  await rule.stop();
  expect(await storedCount("ROUT", 10)).toBe(10);
  // Run 3, from the same checkpoint: the five are redelivered and emitted again with the ids they had.
  rule = await t.rule(def(true), defs).start();
  try {
    await waitFor(() => metric(rule, "sink_nats_0_0_records_out_total") === 5, "5 replayed publishes", 15_000);
    await waitFor(() => metric(rule, "sink_nats_0_0_duplicates_total") === 5, "5 duplicates reported");
    expect((await fx.jsm.streams.info("ROUT")).state.messages).toBe(10);
    await publish(1);
    // A new emission after the replay is a new id: stored.
    expect(await storedCount("ROUT", 11)).toBe(11);
  } finally {
    await rule.stop();
  }
});

test("a source that does not replay (memory): after a restart from a checkpoint the new emissions get new ids, none taken as duplicates", async () => {
  await fx.jsm.streams.add({ name: "MOUT", subjects: ["mout"] });
  const t = testRuntime();
  const defs = streams(`CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="mem-in")`);
  const def = (saveAtStop: boolean) => ({
    id: "memreplay",
    sql: "SELECT v FROM m GROUP BY COUNTWINDOW(1)",
    options: { qos: 1, checkpointInterval: 3_600_000, enableSaveStateBeforeStop: saveAtStop },
    actions: [{ nats: { server: fx.server.url, subject: "mout", jetstream: true, sendSingle: true } }],
  });
  const round = async (saveAtStop: boolean, n: number) => {
    const rule = await t.rule(def(saveAtStop), defs).start();
    try {
      await waitFor(() => metric(rule, "sink_nats_0_0_connection_status") === 1, "sink connected");
      for (let i = 0; i < n; i++) await t.env.pubsub.publish("mem-in", { v: 1 });
      await waitFor(() => metric(rule, "sink_nats_0_0_records_out_total") === n, `${n} publishes`);
      return metric(rule, "sink_nats_0_0_duplicates_total");
    } finally {
      await rule.stop();
    }
  };
  // A checkpoint at the first stop; the second run emits 5 past it and stops without one; the
  // third starts from the same checkpoint, but its emissions are new messages, not a replay.
  await round(true, 5);
  await round(false, 5);
  expect(await round(true, 5)).toBe(0);
  expect(await storedCount("MOUT", 15)).toBe(15);
});
