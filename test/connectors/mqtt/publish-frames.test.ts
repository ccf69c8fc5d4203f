/**
 * The MQTT sink's own QoS 0 PUBLISH frames: byte for byte what MQTT.js (mqtt-packet) writes for
 * the same publish, gathered into one write per turn, and in order with what MQTT.js sends itself.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Writable } from "node:stream";
import mqttPacket from "mqtt-packet";
import { connectAsync } from "mqtt";
import { PublishFrames } from "../../../lib/connectors/mqtt/publish-frames.ts";
import { MqttSink } from "../../../lib/connectors/mqtt/sink.ts";
import { SinkItem } from "../../../lib/sink/connector.ts";
import { NodeMetrics } from "../../../lib/core/metrics.ts";
import { ConnectionReporter } from "../../../lib/core/connection.ts";
import { Mosquitto } from "../../helpers/mosquitto.ts";
import { waitFor } from "../../helpers/wait.ts";

/** A stream that keeps each write. */
class Collect extends Writable {
  writes: Buffer[] = [];
  override _write(chunk: Buffer, _e: BufferEncoding, cb: () => void): void {
    this.writes.push(Buffer.from(chunk));
    cb();
  }
}

const turn = () => new Promise<void>((r) => queueMicrotask(r));

const CASES: [string, string | Uint8Array, boolean][] = [
  ["bench/out", '{"id":"run_0_1","t":23.5}', false],
  ["a/b", "", true],
  ["ünï/cødé", "température 23,5 °C — ok", false],
  ["bin", new Uint8Array([0, 1, 2, 255, 128]), true],
  ["big", "x".repeat(70_000), false],
  ["bigger", "y".repeat(3_000_000), false],
  ["t", "z".repeat(127 - 3), false],
  ["t", "z".repeat(128 - 3), false],
  ["t", "z".repeat(16_384 - 3), false],
];

for (const protocolVersion of [4, 5] as const) {
  test(`MQTT ${protocolVersion === 5 ? "5" : "3.1.1"}: every frame is byte for byte what mqtt-packet generates for the publish`, async () => {
    const s = new Collect();
    const f = new PublishFrames(protocolVersion === 5);
    const want: Buffer[] = [];
    for (const [topic, payload, retain] of CASES) {
      f.add(s, topic, payload, retain);
      want.push(mqttPacket.generate({ cmd: "publish", topic, payload: typeof payload === "string" ? payload : Buffer.from(payload), qos: 0, retain, dup: false }, { protocolVersion }));
    }
    await turn();
    expect(Buffer.concat(s.writes).equals(Buffer.concat(want))).toBe(true);
  });
}

test("a turn's frames go out in one write; a frame larger than the scratch alone; the next turn's in another", async () => {
  const s = new Collect();
  const f = new PublishFrames(false);
  for (let i = 0; i < 100; i++) f.add(s, "t", `{"i":${i}}`, false);
  expect(s.writes.length).toBe(0);
  await turn();
  expect(s.writes.length).toBe(1);
  f.add(s, "t", "a", false);
  f.add(s, "t", "b".repeat(100_000), false);
  f.add(s, "t", "c", false);
  await turn();
  // What came before the big frame, the big frame, what came after.
  expect(s.writes.map((w) => w.length)).toEqual([s.writes[0]!.length, 6, 100_000 + 7, 6]);
});

test("64 KiB gathered are written at once, so the stream's back-pressure shows within the turn", () => {
  const s = new Collect();
  const f = new PublishFrames(false);
  let n = 0;
  while (s.writes.length === 0 && n < 10_000) f.add(s, "t", "p".repeat(1000), false), n++;
  expect(s.writes.length).toBe(1);
  expect(n).toBeLessThan(70);
});

describe("the MQTT sink on a real broker", () => {
  let broker: Mosquitto;
  beforeAll(async () => {
    broker = await Mosquitto.start();
  });
  afterAll(async () => {
    await broker.stop();
  });

  test("QoS 0 frames and MQTT.js's own publishes (v5 user properties) arrive in the order sent; retain is kept", async () => {
    const sub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocolVersion: 5 });
    const got: string[] = [];
    sub.on("message", (t, p, pk) => got.push(`${t} ${p.toString()}${pk.properties?.userProperties ? ` ${JSON.stringify(pk.properties.userProperties)}` : ""}`));
    await sub.subscribeAsync("fr/#", { qos: 0 });
    const sink = new MqttSink({ server: broker.url, topic: "fr/a", protocolVersion: "5", retained: false });
    await sink.open({ ruleId: "r", name: "mqtt_0", status: new ConnectionReporter(), metrics: new NodeMetrics("sink", "mqtt_0"), log: () => {} });
    const want: string[] = [];
    for (let i = 0; i < 30; i++) {
      const props = i % 7 === 3 ? { properties: { k: `v${i}` } } : i % 5 === 0 ? { topic: "fr/b" } : null;
      // As the sink's worker sends: synchronously, waiting only on a promise.
      const r = sink.send(new SinkItem(`m${i}`, props, 1));
      if (r) await r;
      want.push(`${props?.topic ?? "fr/a"} m${i}${props?.properties ? ` {"k":"v${i}"}` : ""}`);
    }
    await waitFor(() => got.length >= want.length, () => `${want.length} messages, got ${got.length}`);
    expect(got).toEqual(want);
    await sink.close();

    const kept = new MqttSink({ server: broker.url, topic: "fr/kept", retained: true });
    await kept.open({ ruleId: "r", name: "mqtt_1", status: new ConnectionReporter(), metrics: new NodeMetrics("sink", "mqtt_1"), log: () => {} });
    await kept.send(new SinkItem("last", null, 1));
    await kept.close();
    const late = await connectAsync({ host: "127.0.0.1", port: broker.port });
    const retained: string[] = [];
    late.on("message", (t, p, pk) => retained.push(`${t} ${p.toString()} ${pk.retain}`));
    await late.subscribeAsync("fr/kept");
    await waitFor(() => retained.length > 0, "the retained message");
    expect(retained).toEqual(["fr/kept last true"]);
    await late.endAsync();
    await sub.endAsync();
  });
});
