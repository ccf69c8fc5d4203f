/**
 * A take-over over JetStream rewinds the partition's durable consumer to the group checkpoint's read
 * position, or, with no group checkpoint, restarts it from its start.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { restartConsumer, rewindConsumer, takeOverRewinds } from "../../lib/cluster/rewind.ts";
import type { StreamDef } from "../../lib/plan/streams.ts";
import { partitionDurables } from "../../lib/server/partitioned-stream.ts";
import { encodeState } from "../../lib/store/state-codec.ts";
import { NatsServer } from "../helpers/nats.ts";

let nats: NatsServer;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await NatsServer.start();
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

test("the read positions a take-over rewinds: a stateful run's sources resume positions after 0 themselves, a stateless run's none", () => {
  const state = (ops: Record<string, unknown>, seq: number) => encodeState({ fp: "f", ops, sources: { tele: { $$offset: { stream: "TELE", consumer: "d0", seq } }, file: { $$offset: 12 } } });
  const windowed = { op_3_window: { rows: [] } };
  // Its source recreates the consumer at sequence 5 as it starts: rewinding it here too would create it twice.
  expect(takeOverRewinds(state(windowed, 4))).toEqual([]);
  expect(takeOverRewinds(state(windowed, 0))).toEqual([{ stream: "TELE", consumer: "d0", seq: 0 }]);
  expect(takeOverRewinds(state({}, 4))).toEqual([{ stream: "TELE", consumer: "d0", seq: 4 }]);
  expect(takeOverRewinds("not a checkpoint")).toEqual([]);
});

test("a consumer acknowledged past the checkpoint delivers again from the sequence after it; one behind it is left alone", async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "TELE", subjects: ["tele.>"] });
  const js = jetstream(nc);
  for (let i = 1; i <= 10; i++) await js.publish("tele.0.dev", JSON.stringify({ i }));
  await jsm.consumers.add("TELE", { durable_name: "d0", ack_policy: AckPolicy.Explicit, filter_subject: "tele.0.>", ack_wait: 30_000_000_000 });
  const c = await js.consumers.get("TELE", "d0");
  for (let i = 0; i < 7; i++) {
    const m = await c.next({ expires: 2000 });
    await m!.ackAck();
  }
  expect((await jsm.consumers.info("TELE", "d0")).ack_floor.stream_seq).toBe(7);
  expect(await rewindConsumer(nc, { stream: "TELE", consumer: "d0", seq: 4 })).toBe(true);
  const again = await js.consumers.get("TELE", "d0");
  const seqs: number[] = [];
  for (let i = 0; i < 6; i++) {
    const m = await again.next({ expires: 2000 });
    seqs.push(m!.seq);
    m!.ack();
  }
  expect(seqs).toEqual([5, 6, 7, 8, 9, 10]);
  const info = await jsm.consumers.info("TELE", "d0");
  expect([info.config.filter_subject, info.config.ack_policy]).toEqual(["tele.0.>", AckPolicy.Explicit]);
  expect(await rewindConsumer(nc, { stream: "TELE", consumer: "d0", seq: 20 })).toBe(false);
  expect(await rewindConsumer(nc, { stream: "TELE", consumer: "nope", seq: 1 })).toBe(false);
});

test("a checkpoint that read nothing yet (seq 0): a consumer delivered to and not acknowledged restarts from its start", async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "TELE3", subjects: ["tele3.>"] });
  const js = jetstream(nc);
  for (let i = 1; i <= 6; i++) await js.publish("tele3.2.dev", JSON.stringify({ i }));
  await jsm.consumers.add("TELE3", { durable_name: "d2", ack_policy: AckPolicy.All, filter_subject: "tele3.2.>", ack_wait: 30_000_000_000 });
  expect(await rewindConsumer(nc, { stream: "TELE3", consumer: "d2", seq: 0 })).toBe(false);
  // The dead owner was delivered four and acknowledged none (ack floor 0, the checkpoint's seq).
  const c = await js.consumers.get("TELE3", "d2");
  for (let i = 0; i < 4; i++) await c.next({ expires: 2000 });
  expect((await jsm.consumers.info("TELE3", "d2")).ack_floor.stream_seq).toBe(0);
  expect(await rewindConsumer(nc, { stream: "TELE3", consumer: "d2", seq: 0 })).toBe(true);
  // In order from the first, at once: not sequences 5 and 6 first and the rest after ackWait.
  const again = await js.consumers.get("TELE3", "d2");
  const seqs: number[] = [];
  for (let i = 0; i < 6; i++) {
    const m = await again.next({ expires: 2000 });
    seqs.push(m!.seq);
    m!.ack();
  }
  expect(seqs).toEqual([1, 2, 3, 4, 5, 6]);
  expect((await jsm.consumers.info("TELE3", "d2")).config.ack_policy).toBe(AckPolicy.All);
});

test("a consumer that delivered anything restarts from its start with its own configuration; an unused or missing one is left alone", async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "TELE2", subjects: ["tele2.>"] });
  const js = jetstream(nc);
  for (let i = 1; i <= 5; i++) await js.publish("tele2.1.dev", JSON.stringify({ i }));
  await jsm.consumers.add("TELE2", { durable_name: "d1", ack_policy: AckPolicy.Explicit, filter_subject: "tele2.1.>" });
  expect(await restartConsumer(nc, "TELE2", "d1")).toBe(false);
  const c = await js.consumers.get("TELE2", "d1");
  for (let i = 0; i < 3; i++) await (await c.next({ expires: 2000 }))!.ackAck();
  expect(await restartConsumer(nc, "TELE2", "d1")).toBe(true);
  const again = await js.consumers.get("TELE2", "d1");
  const seqs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const m = await again.next({ expires: 2000 });
    seqs.push(m!.seq);
    m!.ack();
  }
  expect(seqs).toEqual([1, 2, 3, 4, 5]);
  expect((await jsm.consumers.info("TELE2", "d1")).config.filter_subject).toBe("tele2.1.>");
  expect(await restartConsumer(nc, "TELE2", "nope")).toBe(false);
});

test("the durables a partition of a nats stream reads", () => {
  const def = (type: string, extra: unknown) => ({ name: "s", kind: "stream", options: { TYPE: type, DATASOURCE: "t.{partition}.*", EXTRA: JSON.stringify(extra) } }) as unknown as StreamDef;
  expect(partitionDurables(def("nats", { stream: "IN", durable: "r_{partition}" }), 7)).toEqual([{ stream: "IN", consumer: "r_7" }]);
  expect(partitionDurables(def("nats", { durable: "r_{partition}" }), 7)).toEqual([]);
  expect(partitionDurables(def("mqtt", { stream: "IN", durable: "r" }), 7)).toEqual([]);
});
