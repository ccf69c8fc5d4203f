/**
 * The lean reader's framing (lib/connectors/mqtt/frames.ts): a stream of frames split anywhere —
 * inside the fixed header, the remaining length, the topic, the packet id, the v5 properties, the
 * payload — reads as the unsplit stream does, for v3.1.1 and v5, QoS 0/1 publishes among other
 * frames; a payload of megabytes over many reads comes out whole; a frame that cannot be framed
 * goes, with all after it, to MQTT.js; a payload kept past its read stays intact while the
 * `Publish` objects are reused for later reads.
 */
import { describe, expect, test } from "bun:test";
import { generate, type Packet } from "mqtt-packet";
import { FrameReader, Publishes } from "../../../lib/connectors/mqtt/frames.ts";

interface Read {
  pubs: { topic: string; payload: string; qos: number; id: number; dup: boolean; retain: boolean; userProps: unknown }[];
  others: string;
}

/** Feeds `stream` cut at `cuts` (ascending offsets) and collects what comes out; payloads read after the whole stream (views must stay valid). */
function readSplit(v5: boolean, stream: Buffer, cuts: number[]): Read {
  const r = new FrameReader(v5);
  const pubs = new Publishes();
  const others: Buffer[] = [];
  let from = 0;
  for (const at of [...cuts, stream.length]) {
    // A fresh buffer per read, as the socket gives.
    const o = r.read(Buffer.from(stream.subarray(from, at)), pubs);
    if (o) others.push(Buffer.from(o));
    from = at;
  }
  return {
    pubs: pubs.items.slice(0, pubs.length).map((p) => ({ topic: p.topic, payload: Buffer.from(p.payload).toString("hex"), qos: p.qos, id: p.id, dup: p.dup, retain: p.retain, userProps: p.userProps })),
    others: Buffer.concat(others).toString("hex"),
  };
}

function frames(packets: Packet[], v5: boolean): Buffer {
  return Buffer.concat(packets.map((p) => generate(p, { protocolVersion: v5 ? 5 : 4 })));
}

function publish(topic: string, payload: string | Buffer, qos: 0 | 1 | 2, id: number, more: Record<string, unknown> = {}): Packet {
  return { cmd: "publish", topic, payload, qos, messageId: qos ? id : undefined, dup: false, retain: false, ...more } as Packet;
}

const suback: Packet = { cmd: "suback", messageId: 7, granted: [1] } as Packet;
const pingresp: Packet = { cmd: "pingresp" } as Packet;

const v3Stream = frames(
  [
    publish("a/b", '{"t":1}', 0, 0),
    suback,
    publish("sensors/ü/x", '{"t":2}', 1, 513, { dup: true }),
    pingresp,
    publish("q2", "two", 2, 9),
    publish("a/b", "", 1, 65535, { retain: true }),
    publish("long", Buffer.alloc(300, 7), 0, 0),
  ],
  false,
);

const v5Stream = frames(
  [
    publish("a/b", '{"t":1}', 1, 1, { properties: { userProperties: { traceparent: "00-abc-def-01", k: "v" }, payloadFormatIndicator: true } }),
    pingresp,
    publish("t/alias", "x", 0, 0, { properties: { topicAlias: 3, messageExpiryInterval: 60, contentType: "json", correlationData: Buffer.from("cd") } }),
    publish("", "y", 1, 2, { properties: { topicAlias: 3, responseTopic: "r", subscriptionIdentifier: 300 } }),
    publish("big", Buffer.alloc(200, 1), 0, 0),
  ],
  true,
);

describe("FrameReader", () => {
  for (const [name, v5, stream] of [
    ["v3.1.1", false, v3Stream],
    ["v5", true, v5Stream],
  ] as const) {
    test(`${name}: a stream split at every offset reads as the whole`, () => {
      const whole = readSplit(v5, stream, []);
      expect(whole.pubs.length).toBe(4);
      expect(whole.others.length).toBeGreaterThan(0);
      for (let at = 1; at < stream.length; at++) expect(readSplit(v5, stream, [at])).toEqual(whole);
    });

    test(`${name}: a stream read a byte at a time, or in pieces of 2–7, reads as the whole`, () => {
      const whole = readSplit(v5, stream, []);
      expect(readSplit(v5, stream, Array.from({ length: stream.length - 1 }, (_, i) => i + 1))).toEqual(whole);
      for (let size = 2; size <= 7; size++) {
        const cuts: number[] = [];
        for (let at = size; at < stream.length; at += size) cuts.push(at);
        expect(readSplit(v5, stream, cuts)).toEqual(whole);
      }
    });
  }

  test("the parsed fields are the packets' own", () => {
    const { pubs, others } = readSplit(true, v5Stream, []);
    expect(pubs[0]).toMatchObject({ topic: "a/b", payload: Buffer.from('{"t":1}').toString("hex"), qos: 1, id: 1, userProps: { traceparent: "00-abc-def-01", k: "v" } });
    expect(pubs[1]).toMatchObject({ topic: "t/alias", qos: 0, userProps: null });
    expect(pubs[2]).toMatchObject({ topic: "t/alias", payload: Buffer.from("y").toString("hex"), id: 2 });
    expect(others).toBe("d000");
    const v3 = readSplit(false, v3Stream, []);
    expect(v3.pubs.map((p) => [p.topic, p.qos, p.id, p.dup, p.retain])).toEqual([
      ["a/b", 0, 0, false, false],
      ["sensors/ü/x", 1, 513, true, false],
      ["a/b", 1, 65535, false, true],
      ["long", 0, 0, false, false],
    ]);
    // SUBACK, PINGRESP and the QoS 2 publish, in order.
    expect(v3.others).toBe(frames([suback, pingresp, publish("q2", "two", 2, 9)], false).toString("hex"));
  });

  test("a 3 MB payload over many reads comes out whole, between small frames", () => {
    const big = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 255;
    const stream = frames([publish("s", "a", 0, 0), publish("big", big, 1, 5), publish("s", "b", 0, 0)], false);
    const cuts: number[] = [];
    for (let at = 65536 - 3; at < stream.length; at += 65536) cuts.push(at);
    const r = new FrameReader(false);
    const pubs = new Publishes();
    let from = 0;
    for (const at of [...cuts, stream.length]) {
      expect(r.read(Buffer.from(stream.subarray(from, at)), pubs)).toBeNull();
      from = at;
    }
    expect(pubs.items.slice(0, pubs.length).map((p) => p.topic)).toEqual(["s", "big", "s"]);
    expect(pubs.items[1]!.id).toBe(5);
    expect(Buffer.compare(pubs.items[1]!.payload, big)).toBe(0);
    expect(Buffer.from(pubs.items[2]!.payload).toString()).toBe("b");
  });

  test("a remaining length of more than 4 bytes hands that frame and all after it to MQTT.js", () => {
    const good = frames([publish("a", "1", 0, 0)], false);
    const bad = Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00]);
    const later = frames([publish("b", "2", 0, 0)], false);
    const stream = Buffer.concat([good, bad, later]);
    for (let at = 1; at < stream.length; at++) {
      const r = new FrameReader(false);
      const pubs = new Publishes();
      const out: Buffer[] = [];
      for (const part of [stream.subarray(0, at), stream.subarray(at)]) {
        const o = r.read(Buffer.from(part), pubs);
        if (o) out.push(Buffer.from(o));
      }
      expect(pubs.items.slice(0, pubs.length).map((p) => p.topic)).toEqual(["a"]);
      expect(Buffer.concat(out).toString("hex")).toBe(Buffer.concat([bad, later]).toString("hex"));
    }
  });

  test("payloads kept from one read stay intact while later reads reuse the Publish objects", () => {
    const r = new FrameReader(true);
    const pubs = new Publishes();
    const kept: Uint8Array[] = [];
    const want: string[] = [];
    for (let round = 0; round < 3; round++) {
      const packets = [0, 1, 2].map((k) => publish(`t/${round}`, `p${round}${k}`, 1, round * 3 + k + 1, { properties: round === 1 ? { userProperties: { r: "1" } } : {} }));
      const stream = frames(packets, true);
      // Split mid-frame: the second frame is completed from the next read.
      const cut = generate(packets[0]!, { protocolVersion: 5 }).length + 3;
      for (const part of [stream.subarray(0, cut), stream.subarray(cut)]) r.read(Buffer.from(part), pubs);
      expect(pubs.length).toBe(3);
      expect(pubs.items[0]!.userProps).toEqual(round === 1 ? { r: "1" } : null);
      for (let i = 0; i < pubs.length; i++) kept.push(pubs.items[i]!.payload);
      want.push(`p${round}0`, `p${round}1`, `p${round}2`);
      pubs.clear();
      expect(pubs.items[0]!.userProps).toBeNull();
    }
    expect(pubs.items.length).toBe(3);
    expect(kept.map((p) => Buffer.from(p).toString())).toEqual(want);
  });

  test("a header declaring 200 MB takes memory as the frame arrives, not what it declares", () => {
    // PUBLISH QoS 0, remaining length 200,000,000 (4 length bytes), topic "t", then 1 KiB of it.
    const len = 200_000_000;
    const head = [0x30];
    for (let v = len; ; ) {
      const b = v % 128;
      v = Math.floor(v / 128);
      head.push(v > 0 ? b | 128 : b);
      if (v === 0) break;
    }
    const r = new FrameReader(false);
    const pubs = new Publishes();
    const capacity = () => (r as unknown as { frame: Buffer | null }).frame?.length ?? 0;
    expect(r.read(Buffer.concat([Buffer.from(head), Buffer.from([0, 1, 0x74]), Buffer.alloc(1024)]), pubs)).toBeNull();
    expect(capacity()).toBeLessThanOrEqual(64 * 1024);
    for (let k = 0; k < 16; k++) expect(r.read(Buffer.alloc(64 * 1024), pubs)).toBeNull();
    // 1 MiB arrived: the buffer has grown by doubling, to at most twice that.
    expect(capacity()).toBeGreaterThanOrEqual(16 * 64 * 1024);
    expect(capacity()).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(pubs.length).toBe(0);
  });
});
