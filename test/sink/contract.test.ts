/**
 * One contract for every sink: the same rule results through each connector, against the real
 * thing (a file, an HTTP server, Mosquitto, Redis, the memory pub/sub, the log), with and without
 * the common properties that shape payloads.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectAsync, type MqttClient } from "mqtt";
import { DataServer } from "../../lib/connectors/http/server.ts";
import { encodeGoJson } from "../../lib/value/json-encode.ts";
import { takeMemoryLog } from "../../lib/connectors/log/sink.ts";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { streams, testRuntime, waitFor, waitForValue, type TestRuntime } from "../helpers/runtime.ts";

interface SinkUnderTest {
  readonly type: string;
  props(id: string): Record<string, unknown>;
  /** Payloads received so far, as text. */
  received(id: string, t: TestRuntime): Promise<string[]>;
  /** Attaches the receiving end once the rule started (server-side sinks: a client connects). */
  before?(id: string, t: TestRuntime): Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), "floe-sinks-"));
let broker: Mosquitto;
let mqttSub: MqttClient;
const mqttGot = new Map<string, string[]>();
const httpGot = new Map<string, string[]>();
let http: ReturnType<typeof Bun.serve>;
const memGot = new Map<string, string[]>();
let redis: RedisClient;
let redisSub: RedisClient;
const redisGot = new Map<string, string[]>();
let wsServer: ReturnType<typeof Bun.serve<{ path: string }>>;
const wsGot = new Map<string, string[]>();
const sseGot = new Map<string, string[]>();
const memLogGot = new Map<string, string[]>();

/** Connects an SSE client to the data server's `path` (retrying until the sink registered it) and collects its events. */
async function sseClient(t: TestRuntime, path: string, into: string[]): Promise<void> {
  const url = `http://127.0.0.1:${t.env.dataServer.port}${path}`;
  const res = await waitForValue(async () => {
    const r = await fetch(url).catch(() => undefined);
    return r?.status === 200 ? r : undefined;
  }, `the SSE endpoint ${path}`, 5000, 10);
  void (async () => {
    let buf = "";
    for await (const chunk of res.body as ReadableStream<Uint8Array>) {
      buf += new TextDecoder().decode(chunk);
      let k;
      while ((k = buf.indexOf("\n\n")) >= 0) {
        const ev = buf.slice(0, k);
        buf = buf.slice(k + 2);
        if (ev.startsWith("data: ")) into.push(ev.slice(6));
      }
    }
  })().catch(() => {
    // the stream ends when the sink closes its endpoint
  });
}

beforeAll(async () => {
  broker = await Mosquitto.start();
  mqttSub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
  mqttSub.on("message", (topic, p) => mqttGot.set(topic, [...(mqttGot.get(topic) ?? []), p.toString()]));
  await mqttSub.subscribeAsync("contract/#", { qos: 1 });
  http = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      const id = new URL(req.url).pathname.slice(1);
      httpGot.set(id, [...(httpGot.get(id) ?? []), await req.text()]);
      return new Response("ok");
    },
  });
  redis = new RedisClient("redis://127.0.0.1:6379");
  try {
    await redis.connect();
  } catch (e) {
    throw new Error(`the redis sink tests need a Redis server on 127.0.0.1:6379 (apt-get install redis-server; redis-server --daemonize yes): ${(e as Error).message}`);
  }
  redisSub = new RedisClient("redis://127.0.0.1:6379");
  await redisSub.connect();
  wsServer = Bun.serve<{ path: string }>({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req, srv) => (srv.upgrade(req, { data: { path: new URL(req.url).pathname.slice(1) } }) ? undefined : new Response("no", { status: 400 })),
    websocket: {
      message: (ws, m) => void wsGot.set(ws.data.path, [...(wsGot.get(ws.data.path) ?? []), String(m)]),
    },
  });
});

afterAll(async () => {
  await mqttSub.endAsync();
  await broker.stop();
  http.stop(true);
  redis.close();
  redisSub.close();
  wsServer.stop(true);
});

const SINKS: SinkUnderTest[] = [
  {
    type: "file",
    props: (id) => ({ path: join(dir, `${id}.txt`), fileType: "lines" }),
    received: async (id) => readFileSync(join(dir, `${id}.txt`), "utf8").split("\n").filter((l) => l),
  },
  {
    type: "rest",
    props: (id) => ({ url: `http://127.0.0.1:${http.port}/${id}`, method: "post" }),
    received: async (id) => httpGot.get(id) ?? [],
  },
  {
    type: "mqtt",
    props: (id) => ({ server: broker.url, topic: `contract/${id}`, qos: 1 }),
    received: async (id) => mqttGot.get(`contract/${id}`) ?? [],
  },
  {
    type: "redis",
    props: (id) => ({ addr: "127.0.0.1:6379", key: `floe:contract:${id}`, dataType: "list" }),
    received: async (id) => ((await redis.send("LRANGE", [`floe:contract:${id}`, "0", "-1"])) as string[]).reverse(),
  },
  {
    type: "memory",
    props: (id) => ({ topic: `contract/${id}` }),
    received: async (id) => memGot.get(id) ?? [],
  },
  {
    type: "redisPub",
    props: (id) => ({ address: "127.0.0.1:6379", channel: `floe:contract:${id}:${process.pid}` }),
    before: async (id) => void (await redisSub.subscribe(`floe:contract:${id}:${process.pid}`, (m) => void redisGot.set(id, [...(redisGot.get(id) ?? []), m]))),
    received: async (id) => redisGot.get(id) ?? [],
  },
  {
    type: "websocket",
    props: (id) => ({ addr: `127.0.0.1:${wsServer.port}`, path: `/${id}` }),
    received: async (id) => wsGot.get(id) ?? [],
  },
  {
    type: "sse",
    props: (id) => ({ endpoint: `/sse/${id}` }),
    before: async (id, t) => {
      const into: string[] = [];
      sseGot.set(id, into);
      await sseClient(t, `/sse/${id}`, into);
    },
    received: async (id) => sseGot.get(id) ?? [],
  },
  {
    type: "logToMemory",
    props: () => ({}),
    received: async (id) => {
      const all = [...(memLogGot.get(id) ?? []), ...takeMemoryLog(id)];
      memLogGot.set(id, all);
      return all;
    },
  },
  {
    type: "log",
    props: () => ({}),
    received: async (id, t) => t.logs.filter((l) => l.startsWith(`sink result for rule ${id}: `)).map((l) => l.slice(`sink result for rule ${id}: `.length)),
  },
];

/** Tuple sinks (memory, redis) get a batch as one merged list of rows (rules-and-sinks.md §3.1). */
const TUPLE_BATCH: Record<string, string[]> = {
  memory: ['[{"a":"x","n":0},{"a":"x","n":1},{"a":"x","n":2}]'],
  redis: ['{"a":"x","n":0}', '{"a":"x","n":1}', '{"a":"x","n":2}'],
};

const CASES: { name: string; props: Record<string, unknown>; want: string[] }[] = [
  { name: "one payload per row with sendSingle", props: { sendSingle: true }, want: ['{"a":"x","n":0}', '{"a":"x","n":1}', '{"a":"x","n":2}'] },
  { name: "a dataTemplate per row", props: { sendSingle: true, dataTemplate: '{"v":{{.n}}}' }, want: ['{"v":0}', '{"v":1}', '{"v":2}'] },
  { name: "fields select and order columns", props: { sendSingle: true, fields: ["n"] }, want: ['{"n":0}', '{"n":1}', '{"n":2}'] },
  { name: "a batch of rows as one payload", props: { batchSize: 3 }, want: ['[[{"a":"x","n":0}],[{"a":"x","n":1}],[{"a":"x","n":2}]]'] },
];

const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="contract/in")`);

for (const sink of SINKS) {
  describe(`${sink.type} sink`, () => {
    test.each(CASES.map((c, i) => [c.name, c, i] as const))("%s", async (_n, c, i) => {
      const t = testRuntime({ dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }) });
      const id = `${sink.type}_${i}_${Date.now()}`;
      if (sink.type === "memory") {
        t.env.pubsub.subscribe(
          `contract/${id}`,
          (_topic, rows) => {
            memGot.set(id, [...(memGot.get(id) ?? []), encodeGoJson(rows)]);
            return true;
          },
          () => {},
        );
      }
      const rule = await t.rule({ id, sql: "SELECT n, a FROM s", actions: [{ [sink.type]: { ...sink.props(id), ...c.props } }] }, defs).start();
      await sink.before?.(id, t);
      for (let n = 0; n < 3; n++) await t.env.pubsub.publish("contract/in", { n: BigInt(n), a: "x" });
      const want: string[] = (c.props.batchSize ? TUPLE_BATCH[sink.type] : undefined) ?? c.want;
      if (sink.type === "file") {
        await waitFor(() => rule.metrics()[`sink_file_0_0_records_out_total`] === want.length, "written");
        await rule.stop();
        expect(await sink.received(id, t)).toEqual(want);
        return;
      }
      const got: string[] = [];
      await waitFor(() => {
        void sink.received(id, t).then((g) => (got.length = 0) || got.push(...g));
        return got.length >= want.length;
      }, `${want.length} payloads`);
      expect(got).toEqual(want);
      expect(rule.metrics()[`sink_${sink.type}_0_0_connection_status`]).toBe(1);
      await rule.stop();
      t.env.dataServer.close();
    });
  });
}

test("the nop sink discards and never reports a connection [quirk]", async () => {
  const t = testRuntime();
  const rule = await t.rule({ id: "nop", sql: "SELECT n FROM s", actions: [{ nop: {} }] }, defs).start();
  for (let n = 0; n < 3; n++) await t.env.pubsub.publish("contract/in", { n });
  await waitFor(() => rule.metrics().sink_nop_0_0_records_out_total === 3, "3 discarded");
  expect(rule.metrics().sink_nop_0_0_connection_status).toBe(0);
  await rule.stop();
});

test("connector property errors are the connector's texts", () => {
  const t = testRuntime();
  const mk = (a: Record<string, unknown>) => () => t.rule({ id: "e", sql: "SELECT n FROM s", actions: [a] }, defs);
  expect(mk({ mqtt: { server: "tcp://127.0.0.1:1883" } })).toThrow("mqtt sink is missing property topic");
  expect(mk({ mqtt: { server: "tcp://127.0.0.1:1883", topic: "a/#" } })).toThrow("mqtt sink topic shouldn't contain # or +");
  expect(mk({ mqtt: { server: "tcp://127.0.0.1:1883", topic: "a", qos: 3 } })).toThrow("invalid qos value 3, the value could be only int 0 or 1 or 2");
  expect(mk({ memory: { topic: "a/+" } })).toThrow("invalid memory topic a/+: wildcard found");
  expect(mk({ file: { fileType: "xml" } })).toThrow("fileType must be one of json, csv or lines");
  expect(mk({ redis: { db: 16 } })).toThrow("redisSink db should be in range 0-15");
  expect(mk({ redisPub: {} })).toThrow("redisPub sink is missing property channel");
  expect(mk({ sse: { endpoint: "x" } })).toThrow("sse endpoint should start with /");
  expect(mk({ websocket: { path: "x" } })).toThrow("websocket endpoint should start with /");
  expect(mk({ kafka: {} })).toThrow("sink kafka is not defined");
  expect(mk({ nop: { fields: ["a"], excludeFields: ["b"] } })).toThrow("fail to parse sink configuration: field and excludeFields cannot both be set");
  expect(mk({ nop: { sendSingle: "true" } })).toThrow("1 error(s) decoding:\n\n* 'sendSingle' expected type 'bool', got unconvertible type 'string', value: 'true'");
  expect(mk({ log: [] })).toThrow("expect map[string]interface{} type for the action properties, but found []");
});
