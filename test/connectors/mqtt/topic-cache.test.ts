/**
 * The lean reader's topic cache (lib/connectors/mqtt/frames.ts) gives the topic a UTF-8 decode gives, for
 * any number of topics (it grows, then starts over), for non-ASCII and invalid UTF-8 bytes, and
 * for topics at any offset of a reused read buffer.
 */
import { expect, test } from "bun:test";
import { TopicCache } from "../../../lib/connectors/mqtt/frames.ts";

/** `topic` placed at an offset inside a larger buffer, as in a socket read. */
function framed(bytes: Buffer, at: number): Buffer {
  const b = Buffer.alloc(at + bytes.length + 5, 0x30);
  bytes.copy(b, at);
  return b;
}

test("10,000 round-robin topics (W3's devices), three rounds: every lookup is the decoded topic", () => {
  const c = new TopicCache();
  for (let round = 0; round < 3; round++) {
    for (let d = 0; d < 10_000; d++) {
      const t = `bench/esphome/dev_${d}/sensor/temperature/state`;
      const at = (d * 7) % 13;
      expect(c.get(framed(Buffer.from(t), at), at, at + t.length)).toBe(t);
    }
  }
});

test("more topics than the cache holds: it starts over and stays right", () => {
  const c = new TopicCache();
  for (let round = 0; round < 2; round++) {
    for (let d = 0; d < 40_000; d += 1) {
      const t = `t/${d}`;
      expect(c.get(Buffer.from(t), 0, t.length)).toBe(t);
    }
  }
});

test("non-ASCII and invalid UTF-8 topics decode as Buffer does, on first sight and from the cache", () => {
  const c = new TopicCache();
  const cases = [Buffer.from("température/état"), Buffer.from("日本/東京"), Buffer.from([0x61, 0xff, 0x62]), Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from("a/b"), Buffer.from("")];
  for (let round = 0; round < 3; round++) {
    for (const b of cases) expect(c.get(framed(b, 3), 3, 3 + b.length)).toBe(b.toString("utf8"));
  }
  // Same length, different bytes: a cached topic is never returned for other bytes.
  expect(c.get(Buffer.from([0x61, 0xfe, 0x62]), 0, 3)).toBe(Buffer.from([0x61, 0xfe, 0x62]).toString("utf8"));
  expect(c.get(Buffer.from("a/c"), 0, 3)).toBe("a/c");
});

test("a reused read buffer: the cache keeps no view of it", () => {
  const c = new TopicCache();
  const buf = Buffer.from("x/ü/1");
  expect(c.get(buf, 0, buf.length)).toBe("x/ü/1");
  buf.write("y", 0);
  expect(c.get(buf, 0, buf.length)).toBe("y/ü/1");
  expect(c.get(Buffer.from("x/ü/1"), 0, buf.length)).toBe("x/ü/1");
});
