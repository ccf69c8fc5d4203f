/**
 * MQTT source and sink against a real Mosquitto started by the suite, run once per read path
 * (the lean frame reader and MQTT.js's own): the behaviour must be identical.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connectAsync, type IClientOptions, type MqttClient } from "mqtt";
import type { ReaderKind } from "../../../lib/connectors/mqtt/client.ts";
import { Mosquitto } from "../../helpers/mosquitto.ts";
import { metric, streams, testRuntime, waitFor } from "../../helpers/runtime.ts";

async function client(broker: Mosquitto, o: IClientOptions = {}): Promise<MqttClient> {
  return connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt", reconnectPeriod: 100, ...o });
}

/** Collects `topic payload` lines a subscriber receives. */
async function collector(broker: Mosquitto, filter: string, o: IClientOptions = {}): Promise<{ c: MqttClient; got: string[] }> {
  const c = await client(broker, o);
  const got: string[] = [];
  c.on("message", (t, p) => got.push(`${t} ${p.toString()}`));
  await c.subscribeAsync(filter, { qos: 1 });
  return { c, got };
}

for (const reader of ["lean", "mqttjs"] as ReaderKind[]) {
  describe(`mqtt (${reader} reader)`, () => {
    let broker: Mosquitto;
    beforeAll(async () => {
      broker = await Mosquitto.start();
    });
    afterAll(async () => {
      await broker.stop();
    });

    const vars: Record<string, string> = {};
    const rt = () => testRuntime({ mqttReader: reader, vars });
    /** A confKey of mqtt_source.yaml given through MQTT_SOURCE__<KEY>__<PROP> overrides. */
    const conf = (key: string, props: Record<string, string | number | boolean>): string => {
      vars[`MQTT_SOURCE__${key.toUpperCase()}__SERVER`] = broker.url;
      for (const [k, v] of Object.entries(props)) vars[`MQTT_SOURCE__${key.toUpperCase()}__${k.toUpperCase()}`] = String(v);
      return `CONF_KEY="${key}"`;
    };

    test("MQTT → rule → MQTT at QoS 0 and 1, wildcard topics, topic templates, meta()", async () => {
      const t = rt();
      const defs = streams(`CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="dev/+/temp", ${conf("k73", {qos: 1})})`);
      const rule = await t.rule(
        {
          id: "fwd",
          sql: "SELECT t, meta(topic) AS topic, meta(qos) AS q FROM s WHERE t > 19",
          actions: [{ mqtt: { server: broker.url, topic: "out/{{.t}}", qos: 1, sendSingle: true } }],
        },
        defs,
      ).start();
      const sub = await collector(broker, "out/#");
      await waitFor(() => metric(rule, "source_s_0_connection_status") === 1 && metric(rule, "sink_mqtt_0_0_connection_status") === 1, "connections");
      await waitFor(() => t.ready.includes("s"), "the source to subscribe");
      const pub = await client(broker);
      for (let i = 0; i < 10; i++) await pub.publishAsync(`dev/d${i % 2}/temp`, JSON.stringify({ t: 15 + i }), { qos: (i % 2) as 0 | 1 });
      await pub.publishAsync("dev/d0/humidity", JSON.stringify({ t: 99 }));
      await waitFor(() => sub.got.length === 5, "5 results");
      const want = [20, 21, 22, 23, 24].map((v) => `out/${v} {"q":${(v - 15) % 2},"t":${v},"topic":"dev/d${(v - 15) % 2}/temp"}`);
      expect(sub.got.sort()).toEqual(want);
      expect(metric(rule, "source_s_0_records_in_total")).toBe(10);
      expect(metric(rule, "sink_mqtt_0_0_records_out_total")).toBe(5);
      await rule.stop();
      await pub.endAsync();
      await sub.c.endAsync();
    });

    test("rules stopped before their MQTT clients connected leave no connection behind", async () => {
      const t = rt();
      const defs = streams(`CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="gone/in", ${conf("k73", { qos: 1 })})`);
      const before = broker.clients();
      for (let i = 0; i < 5; i++) {
        const rule = await t.rule({ id: `gone${i}`, sql: "SELECT * FROM s", actions: [{ mqtt: { server: broker.url, topic: "gone/out" } }] }, defs).start();
        await rule.stop();
      }
      // A fixed wait, to show that nothing comes back: longer than the reconnect period (100 ms), a
      // client that came back would show by now.
      await Bun.sleep(400);
      expect(broker.clients()).toBe(before);
    });

    test("QoS 2 subscriptions complete MQTT.js's handshake and admit each message once", async () => {
      const t = rt();
      const defs = streams(`CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="q2/in", ${conf("q2", { qos: 2 })})`);
      const rule = await t.rule({ id: "q2", sql: "SELECT n, meta(qos) AS q FROM s", actions: [{ log: {} }] }, defs).start();
      await waitFor(() => metric(rule, "source_s_0_connection_status") === 1, "connection");
      await waitFor(() => t.ready.includes("s"), "the source to subscribe");
      const pub = await client(broker);
      for (let i = 0; i < 20; i++) await pub.publishAsync("q2/in", JSON.stringify({ n: i }), { qos: 2 });
      await waitFor(() => metric(rule, "sink_log_0_0_records_out_total") === 20, "20 results");
      expect(t.logs).toEqual([...Array(20).keys()].map((i) => `sink result for rule q2: [{"n":${i},"q":2}]`));
      await rule.stop();
      await pub.endAsync();
    });

    test("MQTT v5: user properties in meta(properties) and on published messages", async () => {
      const t = rt();
      const defs = streams(`CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="v5/in", ${conf("k515", {protocolVersion: "5"})})`);
      const rule = await t.rule(
        {
          id: "v5",
          sql: "SELECT a, meta(properties) AS p FROM s",
          actions: [{ mqtt: { server: broker.url, protocolVersion: "5", topic: "v5/out", sendSingle: true, properties: { origin: "floe-{{.a}}" } } }],
        },
        defs,
      ).start();
      const out = await client(broker, { protocolVersion: 5 });
      const got: { payload: string; props: unknown }[] = [];
      out.on("message", (_t, p, packet) => got.push({ payload: p.toString(), props: packet.properties?.userProperties }));
      await out.subscribeAsync("v5/out");
      await waitFor(() => metric(rule, "source_s_0_connection_status") === 1 && metric(rule, "sink_mqtt_0_0_connection_status") === 1, "connections");
      await waitFor(() => t.ready.includes("s"), "the source to subscribe");
      const pub = await client(broker, { protocolVersion: 5 });
      await pub.publishAsync("v5/in", JSON.stringify({ a: 1 }), { qos: 1, properties: { userProperties: { k: "v" } } });
      await waitFor(() => got.length === 1, "one v5 message");
      expect(got[0]).toEqual({ payload: '{"a":1,"p":{"k":"v"}}', props: { origin: "floe-1" } });
      await rule.stop();
      await pub.endAsync();
      await out.endAsync();
    });

    test("a shared subscription splits the messages between two rules", async () => {
      const t = rt();
      const defs = streams(`CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="$share/g/shared/in", ${conf("k73", {qos: 1})})`);
      const mk = (id: string) => t.rule({ id, sql: "SELECT n FROM s", actions: [{ nop: {} }] }, defs);
      const r1 = await mk("g1").start();
      const r2 = await mk("g2").start();
      await waitFor(() => metric(r1, "source_s_0_connection_status") === 1 && metric(r2, "source_s_0_connection_status") === 1, "connections");
      await waitFor(() => t.ready.length === 2, "both rules' sources to subscribe");
      const pub = await client(broker);
      for (let i = 0; i < 100; i++) await pub.publishAsync("shared/in", JSON.stringify({ n: i }), { qos: 1 });
      const n = () => (metric(r1, "sink_nop_0_0_records_out_total") as number) + (metric(r2, "sink_nop_0_0_records_out_total") as number);
      await waitFor(() => n() === 100, "100 results over both rules");
      expect(metric(r1, "sink_nop_0_0_records_out_total")).toBeGreaterThan(0);
      expect(metric(r2, "sink_nop_0_0_records_out_total")).toBeGreaterThan(0);
      await r1.stop();
      await r2.stop();
      await pub.endAsync();
    });

    test("a SHARED stream feeds several rules from one subscription", async () => {
      const t = rt();
      const defs = streams(`CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="fan/in", SHARED="true", ${conf("k73", {qos: 1})})`);
      const r1 = await t.rule({ id: "f1", sql: "SELECT n FROM s WHERE n % 2 = 0", actions: [{ nop: {} }] }, defs).start();
      const r2 = await t.rule({ id: "f2", sql: "SELECT n FROM s", actions: [{ nop: {} }] }, defs).start();
      await waitFor(() => metric(r1, "source_s_0_connection_status") === 1, "connection");
      await waitFor(() => t.ready.includes("s"), "the shared source to subscribe");
      const pub = await client(broker);
      for (let i = 0; i < 50; i++) await pub.publishAsync("fan/in", JSON.stringify({ n: i }), { qos: 1 });
      await waitFor(() => metric(r2, "sink_nop_0_0_records_out_total") === 50 && metric(r1, "sink_nop_0_0_records_out_total") === 25, "both rules");
      // The shared stream's decoder is named after the stream (rest-api.md §6.3), not by index.
      expect(metric(r2, "op_s_decoder_0_records_in_total")).toBe(50);
      expect(r2.metrics()["op_2_decoder_0_records_in_total"]).toBeUndefined();
      await r1.stop();
      expect(metric(r2, "source_s_0_connection_status")).toBe(1);
      await r2.stop();
      await pub.endAsync();
    });

    test("metadata reaches the rules that read it, whichever rule attached first to a SHARED stream", async () => {
      const t = rt();
      const defs = streams(`CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="metas/+", SHARED="true", ${conf("k73", {qos: 1})})`);
      // The first rule reads no metadata: the source leaves it out until a rule that does attaches.
      const plain = await t.rule({ id: "m0", sql: "SELECT n FROM s", actions: [{ log: {} }] }, defs).start();
      await waitFor(() => metric(plain, "source_s_0_connection_status") === 1, "connection");
      await waitFor(() => t.ready.includes("s"), "the shared source to subscribe");
      const pub = await client(broker);
      await pub.publishAsync("metas/a", JSON.stringify({ n: 1 }), { qos: 1 });
      const results = () => t.logs.filter((l) => l.startsWith("sink result"));
      await waitFor(() => results().length === 1, "the plain rule's result");
      const where = await t.rule({ id: "m1", sql: "SELECT n FROM s WHERE meta(topic) = \"metas/b\"", actions: [{ log: {} }] }, defs).start();
      const all = await t.rule({ id: "m2", sql: "SELECT n, meta(*) AS m FROM s", actions: [{ log: {} }] }, defs).start();
      const sent = await t.rule({ id: "m3", sql: "SELECT n FROM s", options: { sendMetaToSink: true }, actions: [{ log: { sendSingle: true, dataTemplate: "{{.__meta.topic}}" } }] }, defs).start();
      await pub.publishAsync("metas/b", JSON.stringify({ n: 2 }), { qos: 1 });
      await waitFor(() => results().length === 5, "every rule's result");
      expect(results().slice(1).sort()).toEqual([
        'sink result for rule m0: [{"n":2}]',
        'sink result for rule m1: [{"n":2}]',
        expect.stringMatching(/^sink result for rule m2: \[\{"m":\{"messageId":\d+,"qos":1,"topic":"metas\/b"\},"n":2\}\]$/),
        "sink result for rule m3: metas/b",
      ]);
      for (const r of [where, all, sent]) await r.stop();
      // Back to a rule without metadata: it still gets every message.
      await pub.publishAsync("metas/c", JSON.stringify({ n: 3 }), { qos: 1 });
      await waitFor(() => results().length === 6, "the plain rule's last result");
      expect(results()[5]).toBe('sink result for rule m0: [{"n":3}]');
      await plain.stop();
      await pub.endAsync();
    });

    test("malformed payloads are counted as decode exceptions and the rule keeps running", async () => {
      const t = rt();
      const defs = streams(`CREATE STREAM s (a bigint) WITH (TYPE="mqtt", DATASOURCE="bad/in", ${conf("k73", {qos: 1})})`);
      const rule = await t.rule({ id: "bad", sql: "SELECT a FROM s", actions: [{ log: {} }] }, defs).start();
      await waitFor(() => metric(rule, "source_s_0_connection_status") === 1, "connection");
      await waitFor(() => t.ready.includes("s"), "the source to subscribe");
      const pub = await client(broker);
      for (const p of ['{"a":1}', "{not json", '{"a":"x"}', "[1,2]", '{"a":2}']) await pub.publishAsync("bad/in", p, { qos: 1 });
      await waitFor(() => metric(rule, "sink_log_0_0_records_out_total") === 2, "two good records");
      expect(metric(rule, "op_2_decoder_0_exceptions_total")).toBe(3);
      expect(metric(rule, "source_s_0_records_in_total")).toBe(5);
      expect(rule.exit).toBeUndefined();
      expect(t.logs).toEqual(['sink result for rule bad: [{"a":1}]', 'sink result for rule bad: [{"a":2}]']);
      await rule.stop();
      await pub.endAsync();
    });

    test("broker killed and restarted mid-stream: QoS 1 with a persistent session loses nothing", async () => {
      const t = rt();
      const defs = streams(
        `CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="rs/in", ${conf("k387", {qos: 1, enableClientSession: true, clientid: "floe-rs-${reader}"})})`,
      );
      const seen: number[] = [];
      t.env.pubsub.subscribe(
        "rs/out",
        (_t, rows) => {
          for (const r of Array.isArray(rows) ? rows : [rows]) seen.push(Number(r.n));
          return true;
        },
        () => {},
      );
      const rule = await t.rule({ id: "rs", sql: "SELECT n FROM s", actions: [{ memory: { topic: "rs/out" } }] }, defs).start();
      await waitFor(() => metric(rule, "source_s_0_connection_status") === 1, "connection");
      await waitFor(() => t.ready.includes("s"), "the source to subscribe");
      const pub = await client(broker, { clientId: `pub-rs-${reader}`, clean: false });
      pub.on("error", () => {});
      const N = 600;
      const sends: Promise<unknown>[] = [];
      for (let i = 0; i < N; i++) {
        sends.push(pub.publishAsync("rs/in", JSON.stringify({ n: i }), { qos: 1 }).catch(() => undefined));
        if (i === 200) {
          await broker.stop("SIGTERM");
          await waitFor(() => metric(rule, "source_s_0_connection_status") !== 1, "disconnect seen");
          setTimeout(() => void broker.restart(), 300);
        }
        // A fixed pause: spreads the publishes over time so that the restart falls mid-stream.
        if (i % 50 === 0) await Bun.sleep(5);
      }
      await waitFor(() => new Set(seen).size === N, () => `all ${N} messages (have ${new Set(seen).size})`, 20_000);
      const dups = seen.length - new Set(seen).size;
      expect(new Set(seen).size).toBe(N);
      // Redeliveries the broker marked DUP are counted on the source node; others came from the publisher's own resend.
      // A DUP-marked redelivery of a message whose first copy died with the connection is counted too
      // (the flag says "may have been sent", MQTT 3.3.1.1), so the count may exceed the duplicates
      // delivered by the messages in flight at the stop (at most the 201 published before it).
      const counted = rule.duplicates();
      expect(counted).toBeLessThanOrEqual(dups + 201);
      console.log(`[${reader}] broker restart: ${N} unique, ${dups} duplicates delivered, ${counted} marked DUP by the broker`);
      expect(metric(rule, "source_s_0_connection_last_disconnected_time")).toBeGreaterThan(0);
      expect(metric(rule, "source_s_0_connection_status")).toBe(1);
      await Promise.all(sends);
      await rule.stop();
      await pub.endAsync();
    }, 30_000);

    test("a stalled sink pauses the source: bounded queues, nothing lost, order kept", async () => {
      let release!: () => void;
      let gate = new Promise<void>((r) => (release = r));
      const bodies: string[] = [];
      const server = Bun.serve({
        port: 0,
        hostname: "127.0.0.1",
        async fetch(req) {
          bodies.push(await req.text());
          await gate;
          return new Response("ok");
        },
      });
      const t = rt();
      const defs = streams(`CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="st/in", ${conf("k73", {qos: 1})})`);
      const rule = await t.rule(
        {
          id: "stall",
          sql: "SELECT n FROM s",
          options: { bufferLength: 64 },
          actions: [{ rest: { url: `http://127.0.0.1:${server.port}/`, method: "post", sendSingle: true, bufferLength: 10, timeout: 60000 } }],
        },
        defs,
      ).start();
      await waitFor(() => metric(rule, "source_s_0_connection_status") === 1, "connection");
      await waitFor(() => t.ready.includes("s"), "the source to subscribe");
      const pub = await client(broker);
      const N = 2000;
      for (let i = 0; i < N; i++) pub.publish("st/in", JSON.stringify({ n: i }), { qos: 1 });
      // Paused: the rule took only what its sink could hold, its queue is full, the rest waits in the broker.
      let last = -1;
      await waitFor(() => {
        const now = metric(rule, "source_s_0_records_in_total") as number;
        const still = now === last && (metric(rule, "source_s_0_buffer_length") as number) > 0;
        last = now;
        return still;
      }, "the source to pause");
      // A fixed wait, to show that the paused source takes nothing more.
      await Bun.sleep(200);
      expect(metric(rule, "source_s_0_records_in_total")).toBe(last);
      expect(last).toBeLessThanOrEqual(12);
      expect(metric(rule, "sink_rest_0_0_buffer_length") as number).toBeLessThanOrEqual(10);
      expect(metric(rule, "source_s_0_buffer_length") as number).toBeLessThanOrEqual(64);
      expect(bodies.length).toBeLessThanOrEqual(1);
      release();
      gate = Promise.resolve();
      await waitFor(() => bodies.length === N, `all ${N} requests`, 20_000);
      expect(bodies.map((b) => JSON.parse(b).n)).toEqual([...Array(N).keys()]);
      await rule.stop();
      expect(rule.lost()).toBe(0);
      await pub.endAsync();
      server.stop(true);
    }, 30_000);
  });
}
