/**
 * The lean read path's socket (lib/connectors/mqtt/lean-stream.ts) against a real Mosquitto: read
 * coalescing gathers a fast stream to a busy engine into reads of many messages and still delivers all of it, a lone
 * message after a quiet spell is read at once, writes larger than the socket takes at once go out
 * whole and in order, and TLS goes through the same socket.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connectAsync, type IClientOptions, type MqttClient } from "mqtt";
import { MqttConnection, type PublishHandler } from "../../../lib/connectors/mqtt/client.ts";
import { parseMqttConf } from "../../../lib/connectors/mqtt/conf.ts";
import type { Publish } from "../../../lib/connectors/mqtt/frames.ts";
import { Mosquitto } from "../../helpers/mosquitto.ts";
import { waitFor } from "../../helpers/runtime.ts";

/**
 * Counts admitted messages and batches (one batch per socket read here: reads stay under 1,024
 * messages). `workMs`: each batch holds the loop that long, as a rule's drain would.
 */
class Counter implements PublishHandler {
  readonly maxBatch = 1024;
  messages = 0;
  batches = 0;
  lastPayload = "";
  lastAt = 0;
  constructor(private readonly workMs = 0) {}
  admit(pubs: readonly Publish[], from: number, to: number): boolean {
    this.messages += to - from;
    this.batches++;
    this.lastPayload = Buffer.from(pubs[to - 1]!.payload).toString();
    this.lastAt = performance.now();
    // The engine's work for the batch, in the same turn as the read.
    const until = this.lastAt + this.workMs;
    while (performance.now() < until);
    return true;
  }
  onDrain(): void {}
}

async function leanConnection(props: Record<string, string | boolean>, topic: string, qos: 0 | 1 = 0, workMs = 0): Promise<{ conn: MqttConnection; counter: Counter }> {
  const counter = new Counter(workMs);
  const conf = parseMqttConf(props, { defaultClientId: `lean-${crypto.randomUUID()}` });
  const conn = new MqttConnection({ conf, handler: counter, reader: "lean", log: () => undefined });
  await conn.subscribe([topic], qos);
  return { conn, counter };
}

describe("lean MQTT socket", () => {
  let broker: Mosquitto;
  let pub: MqttClient;
  beforeAll(async () => {
    broker = await Mosquitto.start();
    pub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
  });
  afterAll(async () => {
    await pub.endAsync();
    await broker.stop();
  });

  test("a stream of 20,000 msg/s to a busy engine arrives whole, many messages per read", async () => {
    // 0.2 ms of work per batch: reading a few messages at a time would hold most of the loop.
    const { conn, counter } = await leanConnection({ server: broker.url }, "fast/#", 0, 0.2);
    // 20 messages per millisecond for half a second, on 100 topics (W3's trickle from a wildcard).
    const total = 10_000;
    for (let sent = 0; sent < total; ) {
      for (let i = 0; i < 20; i++, sent++) pub.publish(`fast/${sent % 100}`, String(sent));
      // A fixed pause: the rate over time is what this test is about.
      await Bun.sleep(1);
    }
    await waitFor(() => counter.messages === total, () => `${total} messages (got ${counter.messages})`);
    expect(counter.lastPayload).toBe(String(total - 1));
    // Without coalescing a read holds the few messages the broker has written by then.
    expect(counter.messages / counter.batches).toBeGreaterThanOrEqual(8);
    await conn.close();
  });

  test("a lone message after a busy spell is read at once, not after the next one", async () => {
    const { conn, counter } = await leanConnection({ server: broker.url }, "lone/#");
    for (let i = 0; i < 2000; i++) pub.publish("lone/busy", String(i));
    await waitFor(() => counter.messages === 2000, "the busy spell");
    // A fixed pause: the reader must go idle (nothing observable says it has) before the lone message.
    await Bun.sleep(50);
    const t0 = performance.now();
    await pub.publishAsync("lone/one", "last");
    // Nothing follows it: a reader left paused, or waiting for more, would never deliver it.
    await waitFor(() => counter.lastPayload === "last", "the lone message", 2000, 1);
    // The coalescing pause is 1 ms; the bound leaves room for a loaded machine.
    expect(counter.lastAt - t0).toBeLessThan(100);
    await conn.close();
  });

  test("publishes larger than the socket takes at once go out whole and in order", async () => {
    const { conn } = await leanConnection({ server: broker.url }, "unused");
    const sub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
    const got: number[] = [];
    sub.on("message", (_t, p) => got.push(p.readUInt32BE(0)));
    await sub.subscribeAsync("big", { qos: 0 });
    // 16 MiB written in one go: the kernel takes a few MiB, the rest waits for `drain`.
    const n = 256;
    for (let i = 0; i < n; i++) {
      const payload = Buffer.alloc(64 * 1024, i & 255);
      payload.writeUInt32BE(i, 0);
      conn.client.publish("big", payload, { qos: 0 });
    }
    await waitFor(() => got.length === n, `${n} large messages (got ${got.length})`, 20_000);
    expect(got).toEqual(Array.from({ length: n }, (_, i) => i));
    await sub.endAsync();
    await conn.close();
  });
});

describe("lean MQTT socket over TLS", () => {
  const dir = join(import.meta.dir, "../../../fixtures/tls");
  const certfile = join(dir, "mqtt-test.crt");
  let broker: Mosquitto;
  beforeAll(async () => {
    broker = await Mosquitto.start([`certfile ${certfile}`, `keyfile ${join(dir, "mqtt-test.key")}`]);
  });
  afterAll(async () => {
    await broker.stop();
  });
  const tlsPub: IClientOptions = { protocol: "mqtts", ca: readFileSync(certfile) };

  test("a source with rootCaPath reads QoS 0 and 1 over TLS", async () => {
    const { conn, counter } = await leanConnection({ server: `ssl://127.0.0.1:${broker.port}`, rootCaPath: certfile }, "tls/#", 1);
    const pub = await connectAsync({ host: "127.0.0.1", port: broker.port, ...tlsPub });
    for (let i = 0; i < 100; i++) await pub.publishAsync("tls/in", String(i), { qos: i % 2 === 0 ? 0 : 1 });
    await waitFor(() => counter.messages === 100, `100 messages (got ${counter.messages})`);
    expect(counter.lastPayload).toBe("99");
    await pub.endAsync();
    await conn.close();
  });

  test("insecureSkipVerify reads from a broker whose certificate is not trusted", async () => {
    const { conn, counter } = await leanConnection({ server: `ssl://127.0.0.1:${broker.port}`, insecureSkipVerify: true }, "insecure/#");
    const pub = await connectAsync({ host: "127.0.0.1", port: broker.port, ...tlsPub });
    await pub.publishAsync("insecure/in", "x");
    await waitFor(() => counter.messages === 1, "the message");
    await pub.endAsync();
    await conn.close();
  });

  test("an unknown certificate authority is refused with the TLS error", async () => {
    const counter = new Counter();
    const conf = parseMqttConf({ server: `ssl://127.0.0.1:${broker.port}` }, { defaultClientId: "lean-untrusted" });
    const errors: string[] = [];
    const conn = new MqttConnection({ conf, handler: counter, reader: "lean", log: (l) => errors.push(l) });
    await waitFor(() => errors.length > 0, "a TLS error");
    // In Go's words, as eKuiper's client reports it.
    expect(errors[0]).toContain("network Error : tls: failed to verify certificate: x509: certificate signed by unknown authority");
    expect(conn.connected).toBe(false);
    await conn.close();
  });
});
