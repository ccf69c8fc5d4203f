/**
 * A JetStream source acknowledging at checkpoints (lib/connectors/nats/source.ts) counts each
 * message once when the server redelivers it past ackWait where no acknowledgement or +WPI could
 * keep it: after the checkpoint covering it was stored but before that checkpoint's
 * acknowledgement reached the server (neither waiting here any more nor in the restored
 * checkpoint, yet in the state), or while its first delivery waited in the reader for room on a
 * full bus (the redelivery then comes in the same batch). Against a real nats-server, the source
 * driven directly: the test is its rule, taking from the bus and taking checkpoints.
 */
import { expect, test } from "bun:test";
import { jetstream } from "@nats-io/jetstream";
import { Bus } from "../../../lib/core/bus.ts";
import { ConnectionReporter } from "../../../lib/core/connection.ts";
import { NatsSource } from "../../../lib/connectors/nats/source.ts";
import type { SourceContext } from "../../../lib/source/connector.ts";
import type { SourceMessage } from "../../../lib/source/message.ts";
import { jetStreamFixture } from "../../helpers/nats.ts";
import { waitFor } from "../../helpers/runtime.ts";

const fx = jetStreamFixture();

/** A source reading stream `name` (subject `<name>.in`, durable `d`, ackWait 1 s) at checkpoints into a bus of `capacity`. */
async function reading(name: string, capacity: number) {
  const bus = new Bus<SourceMessage>();
  const sub = bus.subscribe(capacity, "block", () => {});
  const r = { sub, taken: [] as SourceMessage[], dups: 0, ready: false, errors: [] as string[] };
  const ctx: SourceContext = {
    bus,
    status: new ConnectionReporter(),
    ref: `${name}_s_0`,
    exception: (m) => void r.errors.push(m),
    fail: (e) => void r.errors.push(String(e)),
    duplicates: (n) => void (r.dups += n),
    eof: () => {},
    log: () => {},
    ready: () => void (r.ready = true),
    ackMode: "checkpoint",
  };
  const src = new NatsSource({ datasource: `${name.toLowerCase()}.in`, stream: name, durable: "d", ackWait: "1s", server: fx.server.url });
  await src.open(ctx);
  return { src, r, take: () => void sub.take(r.taken, capacity) };
}

async function publish(name: string, from: number, to: number): Promise<void> {
  const js = jetstream(fx.nc);
  for (let i = from; i < to; i++) await js.publish(`${name.toLowerCase()}.in`, JSON.stringify({ n: i }));
}

const ns = (ms: SourceMessage[]) => ms.map((m) => (JSON.parse(new TextDecoder().decode(m.payload!)) as { n: number }).n);

test("a redelivery of a message in a stored checkpoint whose acknowledgement was still on its way is skipped, not taken again", async () => {
  await fx.jsm.streams.add({ name: "RD", subjects: ["rd.in"] });
  await publish("RD", 0, 5);
  const { src, r, take } = await reading("RD", 4096);
  try {
    await waitFor(() => r.ready && r.sub.length === 5, "5 delivered");
    // The rule takes all five (its state now counts them).
    take();
    // The event loop held past ackWait (a starved member's): no +WPI goes out, and the server
    // redelivers the five into the outstanding pull meanwhile.
    Bun.sleepSync(3000);
    // Before the loop reads them: a checkpoint covering the five is stored and acknowledged.
    expect((src.offset(0) as { seq: number }).seq).toBe(5);
    src.checkpointed();
    // Each of the five redelivered once a second while the loop was held.
    await waitFor(() => r.dups >= 5, "the redeliveries read");
    expect(r.dups % 5).toBe(0);
    await fx.nc.flush();
    await Bun.sleep(200);
    take();
    expect(ns(r.taken)).toEqual([0, 1, 2, 3, 4]);
    const info = await fx.jsm.consumers.info("RD", "d");
    expect([info.num_ack_pending, info.ack_floor.stream_seq]).toEqual([0, 5]);
    expect(r.errors).toEqual([]);
  } finally {
    await src.close();
  }
}, 20_000);

test("a redelivery of a message waiting in the reader for room on the bus is skipped in the batch that brings both", async () => {
  await fx.jsm.streams.add({ name: "RB", subjects: ["rb.in"] });
  await publish("RB", 0, 8);
  // A bus of 8: the reader pulls 8 at a time.
  const { src, r, take } = await reading("RB", 8);
  try {
    await waitFor(() => r.ready && r.sub.length === 8, "8 delivered");
    // The next pull brings 3 (all there is) and leaves room for 5; the full bus refuses them, and
    // nobody takes: past ackWait the server redelivers them into that pull.
    await publish("RB", 8, 11);
    await waitFor(async () => (await fx.jsm.consumers.info("RB", "d")).num_redelivered >= 3, "the 3 waiting redelivered", 10_000);
    take();
    await waitFor(() => r.sub.length >= 3 && r.dups >= 3, "the batch with the redeliveries admitted");
    take();
    expect(ns(r.taken)).toEqual([...Array(11).keys()]);
    expect(r.errors).toEqual([]);
  } finally {
    await src.close();
  }
}, 20_000);
