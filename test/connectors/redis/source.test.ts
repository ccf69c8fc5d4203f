/**
 * The redisSub source and the redisPub sink (rules-and-sinks.md §11.9) against the real Redis on
 * 127.0.0.1:6379, with channel names unique to each test.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { collect, dataRuntime } from "../../helpers/data-server.ts";
import { streams, waitFor } from "../../helpers/runtime.ts";

let pub: RedisClient;
beforeAll(async () => {
  pub = new RedisClient("redis://127.0.0.1:6379");
  try {
    await pub.connect();
  } catch (e) {
    throw new Error(`the redis tests need a Redis server on 127.0.0.1:6379 (apt-get install redis-server; redis-server --daemonize yes): ${(e as Error).message}`);
  }
});
afterAll(() => pub.close());

const extra = (props: Record<string, unknown>): string => JSON.stringify(JSON.stringify(props));
const uniq = (name: string) => `floe:test:${name}:${process.pid}:${Date.now()}`;

/** Publishes until someone receives (the subscription is asynchronous). */
async function publishUntilHeard(channel: string, msg: string): Promise<void> {
  await waitFor(async () => (await pub.publish(channel, msg)) > 0, `a subscriber on ${channel}`, 5000, 10);
}

test("each message published on the channels is one payload decoded by FORMAT", async () => {
  const t = dataRuntime();
  const [c1, c2] = [uniq("a"), uniq("b")];
  const defs = streams(`CREATE STREAM s () WITH (TYPE="redisSub", EXTRA=${extra({ address: "127.0.0.1:6379", db: 0, channels: [c1, c2] })})`);
  const got = collect(t, "rs/out");
  const rule = await t.rule({ id: "rs1", sql: "SELECT v, meta(channel) AS ch FROM s", actions: [{ memory: { topic: "rs/out", sendSingle: true } }] }, defs).start();
  try {
    await publishUntilHeard(c1, '{"v":1}');
    await publishUntilHeard(c2, '{"v":2}');
    await pub.publish(c1, "not json");
    await waitFor(() => got.length === 2 && rule.metrics().op_2_decoder_0_exceptions_total === 1, "2 rows and a decode error");
    expect(got.map((g) => JSON.parse(g) as unknown)).toEqual([
      { v: 1, ch: c1 },
      { v: 2, ch: c2 },
    ]);
    expect(rule.metrics().source_s_0_connection_status).toBe(1);
  } finally {
    await rule.stop();
  }
});

test("redisPub publishes each payload; a redisSub rule reads it back", async () => {
  const t = dataRuntime();
  const ch = uniq("chain");
  const defs = streams(
    `CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="rp/in")`,
    `CREATE STREAM back () WITH (TYPE="redisSub", EXTRA=${extra({ channels: [ch] })})`,
  );
  const got = collect(t, "rp/out");
  const reader = await t.rule({ id: "rp-r", sql: "SELECT n FROM back", actions: [{ memory: { topic: "rp/out", sendSingle: true } }] }, defs).start();
  const writer = await t.rule({ id: "rp-w", sql: "SELECT n * 2 AS n FROM m", actions: [{ redisPub: { address: "127.0.0.1:6379", channel: ch, sendSingle: true } }] }, defs).start();
  try {
    await waitFor(() => reader.metrics().source_back_0_connection_status === 1 && writer.metrics().sink_redisPub_0_0_connection_status === 1, "both connected");
    // The subscription is live once Redis counts a subscriber on the channel.
    await waitFor(() => {
      void pub.send("PUBSUB", ["NUMSUB", ch]).then((r) => (subs = Number((r as unknown[])[1])));
      return subs > 0;
    }, "the subscription");
    for (let n = 1; n <= 3; n++) await t.env.pubsub.publish("rp/in", { n: BigInt(n) });
    await waitFor(() => got.length === 3, "3 rows back");
    expect(got).toEqual(['{"n":2}', '{"n":4}', '{"n":6}']);
  } finally {
    await writer.stop();
    await reader.stop();
  }
});
let subs = 0;

test("property errors", () => {
  const t = dataRuntime();
  const mk = (a: Record<string, unknown>) => () => t.rule({ id: "e", sql: "SELECT * FROM s", actions: [a] }, streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="x")`));
  expect(mk({ redisPub: { address: "127.0.0.1:6379" } })).toThrow("redisPub sink is missing property channel");
  expect(mk({ redisPub: { channel: "c", db: 16 } })).toThrow("redisPub db should be in range 0-15");
});

test("a redisSub stream without channels is refused at start", async () => {
  const t = dataRuntime();
  const rule = t.rule({ id: "e2", sql: "SELECT * FROM s", actions: [{ nop: {} }] }, streams(`CREATE STREAM s () WITH (TYPE="redisSub")`));
  await expect(rule.start()).rejects.toThrow("redisSub source is missing property channels");
});
