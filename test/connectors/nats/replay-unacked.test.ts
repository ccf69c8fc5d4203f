/**
 * ensureConsumer's `replayUnacked` (lib/connectors/nats/consumer.ts), against a real nats-server:
 * a durable that delivered past its acknowledgement floor is recreated to deliver from the floor
 * on, in order, at once (not after ackWait); one with nothing outstanding, or without the flag, is
 * used as it is.
 */
import { expect, test } from "bun:test";
import { AckPolicy, DeliverPolicy, jetstream } from "@nats-io/jetstream";
import { ensureConsumer, type ConsumerSpec } from "../../../lib/connectors/nats/consumer.ts";
import { jetStreamFixture } from "../../helpers/nats.ts";

const fx = jetStreamFixture();

const spec = (stream: string): ConsumerSpec => ({
  stream,
  durable: "d",
  subject: "",
  deliverPolicy: "all",
  startSeq: 0,
  startTime: "",
  ackWait: 60_000,
  maxAckPending: 1000,
  ackPolicy: "all",
});

/** Stream `name` with 10 messages; its durable `d` delivered the first 6 and had the first 2 acknowledged. */
async function halfRead(name: string): Promise<void> {
  await fx.jsm.streams.add({ name, subjects: [name.toLowerCase()] });
  const js = jetstream(fx.nc);
  for (let i = 1; i <= 10; i++) await js.publish(name.toLowerCase(), String(i));
  await ensureConsumer(fx.jsm, spec(name));
  const c = await js.consumers.get(name, "d");
  const got = await c.fetch({ max_messages: 6, expires: 2000 });
  const ms = [];
  for await (const m of got) ms.push(m);
  expect(ms.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  await ms[1]!.ackAck();
}

async function next(name: string, n: number): Promise<{ seq: number; deliveries: number }[]> {
  const c = await jetstream(fx.nc).consumers.get(name, "d");
  const out = [];
  for await (const m of await c.fetch({ max_messages: n, expires: 1000 })) out.push({ seq: m.seq, deliveries: m.info.deliveryCount });
  return out;
}

test("delivered and unacknowledged: recreated to deliver from the acknowledgement floor, at once and in order", async () => {
  await halfRead("RU1");
  const { info } = await ensureConsumer(fx.jsm, spec("RU1"), 0, true);
  expect([info.config.ack_policy, info.num_ack_pending, info.delivered.consumer_seq]).toEqual([AckPolicy.All, 0, 0]);
  expect(await next("RU1", 8)).toEqual([3, 4, 5, 6, 7, 8, 9, 10].map((seq) => ({ seq, deliveries: 1 })));
});

test("without the flag the durable is kept: the next delivery is the first never delivered", async () => {
  await halfRead("RU2");
  const { info } = await ensureConsumer(fx.jsm, spec("RU2"));
  expect([info.delivered.stream_seq, info.ack_floor.stream_seq]).toEqual([6, 2]);
  expect((await next("RU2", 1)).map((d) => d.seq)).toEqual([7]);
});

test("nothing acknowledged yet: recreated with its own configuration, from its own start", async () => {
  await fx.jsm.streams.add({ name: "RU3", subjects: ["ru3"] });
  const js = jetstream(fx.nc);
  for (let i = 1; i <= 10; i++) await js.publish("ru3", String(i));
  await fx.jsm.consumers.add("RU3", { durable_name: "d", ack_policy: AckPolicy.All, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 5 });
  expect((await next("RU3", 3)).map((d) => d.seq)).toEqual([5, 6, 7]);
  const { info } = await ensureConsumer(fx.jsm, spec("RU3"), 0, true);
  expect([info.config.opt_start_seq, info.num_ack_pending]).toEqual([5, 0]);
  expect(await next("RU3", 6)).toEqual([5, 6, 7, 8, 9, 10].map((seq) => ({ seq, deliveries: 1 })));
});

test("nothing awaiting acknowledgement: the durable is kept as it is", async () => {
  await fx.jsm.streams.add({ name: "RU4", subjects: ["ru4"] });
  const js = jetstream(fx.nc);
  for (let i = 1; i <= 10; i++) await js.publish("ru4", String(i));
  // Created at sequence 5 and never read: its delivered position (4) is past its floor (0), yet nothing waits.
  const before = await fx.jsm.consumers.add("RU4", { durable_name: "d", ack_policy: AckPolicy.All, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 5 });
  const { info } = await ensureConsumer(fx.jsm, spec("RU4"), 0, true);
  expect(info.created).toBe(before.created);
  expect((await next("RU4", 1)).map((d) => d.seq)).toEqual([5]);
});
