/**
 * Named connections (rules-and-sinks.md §9) against a real Mosquitto: every source and sink node
 * that selects a connection shares one MQTT client, reference-counted by the attached nodes, and
 * follows its connection status; each source gets the publishes its own topics match.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connectAsync, type MqttClient } from "mqtt";
import { TopicFilter } from "../../../lib/connectors/mqtt/shared.ts";
import type { ReaderKind } from "../../../lib/connectors/mqtt/client.ts";
import { Mosquitto } from "../../helpers/mosquitto.ts";
import { metric, streams, testRuntime, waitFor } from "../../helpers/runtime.ts";

test.each([
  ["a/b", "a/b", true],
  ["a/b", "a/b/c", false],
  ["a/+", "a/b", true],
  ["a/+", "a", false],
  ["a/+", "a/", true],
  ["a/#", "a", true],
  ["a/#", "a/b/c", true],
  ["#", "x/y", true],
  ["+/b", "a/b", true],
  ["+/b", "a/c", false],
  ["#", "$SYS/x", false],
  ["$share/g/dev/+/t", "dev/d1/t", true],
  ["$share/g/dev/+/t", "dev/d1/x", false],
] as const)("topic filter %s on %s matches: %p", (filter, topic, want) => {
  expect(new TopicFilter(filter).matches(topic)).toBe(want);
});

for (const reader of ["lean", "mqttjs"] as ReaderKind[]) {
  describe(`named connections (${reader} reader)`, () => {
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

    /** A runtime whose confKeys hold connection `conn1` and source confKey `viaconn` selecting it. */
    function runtime() {
      const props = { server: broker.url, protocolVersion: "3.1.1" };
      const t = testRuntime({
        mqttReader: reader,
        vars: { MQTT_SOURCE__VIACONN__CONNECTIONSELECTOR: "conn1", MQTT_SOURCE__VIACONN__QOS: "1" },
        confKey: (kind, type, key) => (kind === "connections" && type === "mqtt" && key === "conn1" ? props : undefined),
      });
      t.env.connections.open("conn1", "mqtt", props);
      return t;
    }

    test("sources and sinks of two rules share one client; each source gets only its topics", async () => {
      const before = broker.clients();
      const t = runtime();
      const defs = streams(
        `CREATE STREAM a () WITH (TYPE="mqtt", DATASOURCE="nc/a/+", CONF_KEY="viaconn")`,
        `CREATE STREAM b () WITH (TYPE="mqtt", DATASOURCE="nc/b", CONF_KEY="viaconn")`,
      );
      const out = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
      const got: string[] = [];
      out.on("message", (topic, p) => got.push(`${topic} ${p.toString()}`));
      await out.subscribeAsync("nc/out/#", { qos: 1 });
      const sink = (topic: string) => ({ mqtt: { connectionSelector: "conn1", topic, qos: 1, sendSingle: true } });
      const ra = await t.rule({ id: "ra", sql: "SELECT n, meta(topic) AS t FROM a", actions: [sink("nc/out/a")] }, defs).start();
      const rb = await t.rule({ id: "rb", sql: "SELECT n FROM b", actions: [sink("nc/out/b")] }, defs).start();
      await waitFor(() => [ra, rb].every((r) => metric(r, "source_" + (r === ra ? "a" : "b") + "_0_connection_status") === 1 && metric(r, "sink_mqtt_0_0_connection_status") === 1), "connections");
      expect(t.env.connections.refs("conn1")).toEqual(["ra_a_0", "ra_mqtt_0_0", "rb_b_0", "rb_mqtt_0_0"]);
      // One client for four nodes (plus the test's own subscriber).
      expect(broker.clients() - before).toBe(2);
      await waitFor(() => t.ready.includes("a") && t.ready.includes("b"), "both sources to subscribe");
      for (let i = 0; i < 6; i++) await pub.publishAsync(i % 2 ? "nc/b" : `nc/a/x${i}`, JSON.stringify({ n: i }), { qos: 1 });
      await pub.publishAsync("nc/other", JSON.stringify({ n: 99 }), { qos: 1 });
      await waitFor(() => got.length === 6, "six results");
      expect(got.sort()).toEqual([
        'nc/out/a {"n":0,"t":"nc/a/x0"}',
        'nc/out/a {"n":2,"t":"nc/a/x2"}',
        'nc/out/a {"n":4,"t":"nc/a/x4"}',
        'nc/out/b {"n":1}',
        'nc/out/b {"n":3}',
        'nc/out/b {"n":5}',
      ]);
      expect(metric(ra, "source_a_0_records_in_total")).toBe(3);
      expect(metric(rb, "source_b_0_records_in_total")).toBe(3);
      // Stopping a rule releases its nodes; the named connection stays up for the other.
      await ra.stop();
      expect(t.env.connections.refs("conn1")).toEqual(["rb_b_0", "rb_mqtt_0_0"]);
      expect(t.env.connections.state("conn1")).toEqual({ status: "connected" });
      await pub.publishAsync("nc/b", JSON.stringify({ n: 7 }), { qos: 1 });
      await waitFor(() => got.length === 7, "rb still runs");
      await rb.stop();
      expect(t.env.connections.refs("conn1")).toEqual([]);
      await t.env.connections.closeAll();
      await out.endAsync();
    });

    test("a broker restart is seen by every node on the connection, and the subscriptions come back", async () => {
      const t = runtime();
      const defs = streams(`CREATE STREAM a () WITH (TYPE="mqtt", DATASOURCE="nr/in", CONF_KEY="viaconn")`);
      const seen: number[] = [];
      t.env.pubsub.subscribe(
        "nr/out",
        (_t, rows) => {
          for (const r of Array.isArray(rows) ? rows : [rows]) seen.push(Number(r.n));
          return true;
        },
        () => {},
      );
      const r1 = await t.rule({ id: "r1", sql: "SELECT n FROM a", actions: [{ memory: { topic: "nr/out" } }, { mqtt: { connectionSelector: "conn1", topic: "nr/echo" } }] }, defs).start();
      await waitFor(() => metric(r1, "source_a_0_connection_status") === 1 && metric(r1, "sink_mqtt_1_0_connection_status") === 1, "connected");
      await broker.stop();
      const lostAt = (r: string) => metric(r1, `${r}_connection_last_disconnected_time`) as number;
      await waitFor(() => lostAt("source_a_0") > 0 && lostAt("sink_mqtt_1_0") > 0, "both nodes see the loss");
      expect(metric(r1, "source_a_0_exceptions_total")).toBe(1);
      // Failed reconnection attempts leave the state at connecting (0), as eKuiper shows it, not −1.
      await waitFor(() => (metric(r1, "source_a_0_connection_last_try_time") as number) > lostAt("source_a_0"), "a reconnection attempt");
      await waitFor(() => t.env.connections.state("conn1").err !== undefined, "the attempt's error");
      expect([metric(r1, "source_a_0_connection_status"), metric(r1, "sink_mqtt_1_0_connection_status")]).toEqual([0, 0]);
      expect(t.env.connections.state("conn1")).toEqual({ status: "connecting", err: `network Error : dial tcp 127.0.0.1:${broker.port}: connect: connection refused` });
      expect(metric(r1, "source_a_0_connection_last_disconnected_message")).not.toBe("");
      await broker.restart();
      await waitFor(() => metric(r1, "source_a_0_connection_status") === 1 && metric(r1, "sink_mqtt_1_0_connection_status") === 1, "both reconnected", 15_000);
      const p2 = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
      await waitFor(() => {
        void p2.publishAsync("nr/in", JSON.stringify({ n: 1 }), { qos: 1 });
        return seen.length > 0;
      }, "a message through the resubscribed topic");
      await r1.stop();
      await p2.endAsync();
      await t.env.connections.closeAll();
      pub.reconnect();
      await waitFor(() => pub.connected, "the test publisher reconnects");
    }, 30_000);
  });
}

test("a selector naming no connection stops the rule with eKuiper's error; a non-MQTT connection is refused", async () => {
  const t = testRuntime({ confKey: (kind, _type, key) => (kind === "connections" && key === "nng1" ? { server: "tcp://127.0.0.1:1" } : undefined) });
  const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="x")`);
  expect(() => t.rule({ id: "x", sql: "SELECT * FROM s", actions: [{ mqtt: { connectionSelector: "nope", topic: "t" } }] }, defs)).toThrow("connection nope not existed");
  t.env.connections.open("nng1", "nng", {});
  const r = t.rule({ id: "y", sql: "SELECT * FROM s", actions: [{ mqtt: { connectionSelector: "nng1", topic: "t" } }] }, defs);
  await expect(r.start()).rejects.toThrow("connection nng1 should be mqtt connection");
  expect(t.env.connections.refs("nng1")).toEqual([]);
});
