/**
 * Tracing across MQTT v5 (rules-and-sinks.md §9.1, §9.2): a publish carrying a `traceparent` user
 * property continues its trace in a traced rule, and the rule's v5 publishes carry the trace on
 * (`traceparent` naming the sink's span), against a real Mosquitto.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connectAsync, type MqttClient } from "mqtt";
import { TraceHub } from "../../../lib/runtime/trace/hub.ts";
import type { LocalTraceStore } from "../../../lib/runtime/trace/store.ts";
import { Mosquitto } from "../../helpers/mosquitto.ts";
import { metric, streams, testRuntime, waitFor } from "../../helpers/runtime.ts";
import { createNetGuard } from "../../../lib/net/guard.ts";

let broker: Mosquitto;
beforeAll(async () => {
  broker = await Mosquitto.start();
});
afterAll(async () => {
  await broker.stop();
});

async function client(): Promise<MqttClient> {
  return connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt", protocolVersion: 5, reconnectPeriod: 100 });
}

test("a v5 traceparent continues into the rule's trace and out through its v5 publishes", async () => {
  const hub = new TraceHub({ serviceName: "t", enableRemoteCollector: false, remoteEndpoint: "", localTraceCapacity: 10, localTraceMaxBytes: 64 * 1024 * 1024, enableLocalStorage: false }, createNetGuard(), () => {}, "");
  const store = hub.store as LocalTraceStore;
  const t = testRuntime({ traces: hub, vars: { MQTT_SOURCE__TR__SERVER: broker.url, MQTT_SOURCE__TR__PROTOCOLVERSION: "5" } });
  const defs = streams(`CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="tr/in", CONF_KEY="tr")`);
  const def = t.rule({ id: "mq", sql: "SELECT a FROM s", actions: [{ mqtt: { server: broker.url, protocolVersion: "5", topic: "tr/out", sendSingle: true, properties: { k: "v" } } }] }, defs);
  const out = await client();
  const got: { payload: string; props: Record<string, unknown> | undefined }[] = [];
  out.on("message", (_t, p, packet) => got.push({ payload: p.toString(), props: packet.properties?.userProperties as Record<string, unknown> | undefined }));
  await out.subscribeAsync("tr/out");
  const rule = await def.start();
  try {
    await waitFor(() => metric(rule, "source_s_0_connection_status") === 1 && metric(rule, "sink_mqtt_0_0_connection_status") === 1, "connections");
    await waitFor(() => t.ready.includes("s"), "the source to subscribe");
    const pub = await client();
    // Untraced first: nothing is added to the publish.
    await pub.publishAsync("tr/in", JSON.stringify({ a: 0 }), { qos: 1, properties: { userProperties: { traceparent: `00-${"e".repeat(32)}-${"f".repeat(16)}-01` } } });
    await waitFor(() => got.length === 1, "an untraced result");
    expect(got[0]!.props).toEqual({ k: "v" });

    rule.trace("head");
    const trace = "5".repeat(32);
    await pub.publishAsync("tr/in", JSON.stringify({ a: 1 }), { qos: 1, properties: { userProperties: { traceparent: `00-${trace}-${"6".repeat(16)}-01` } } });
    await waitFor(() => got.length === 2, "a traced result");
    expect(store.traceIds("mq", 0)).toEqual([trace]);
    const tree = store.tree(trace)!;
    expect(tree.parentSpanID).toBe("6".repeat(16));
    let sink = tree;
    while (sink.ChildSpan.length) sink = sink.ChildSpan[0]!;
    expect(sink.name).toBe("sink_mqtt_0");
    expect(got[1]).toEqual({ payload: '{"a":1}', props: { k: "v", traceparent: `00-${trace}-${sink.spanID}-01` } });
    await pub.endAsync();
  } finally {
    await rule.stop();
    await out.endAsync();
  }
});
