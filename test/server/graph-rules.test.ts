/**
 * Graph rules through a live daemon and a real broker (graph-rules.md §9, §11): create, status
 * keys, topology, validate, explain, update between graph and SQL, and eKuiper's error bodies.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import mqtt from "mqtt";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

let broker: Mosquitto;
let client: mqtt.MqttClient;
const received = new Map<string, string[]>();
let d: DaemonProc;

beforeAll(async () => {
  broker = await Mosquitto.start();
  client = await mqtt.connectAsync(broker.url.replace("tcp:", "mqtt:"));
  await client.subscribeAsync("graph/#", { qos: 1 });
  client.on("message", (t, p) => (received.get(t) ?? received.set(t, []).get(t)!).push(p.toString()));
  d = await startFloe(tempHome());
  expect((await d.call("PUT", "/metadata/sources/mqtt/confKeys/g", { server: broker.url })).status).toBe(200);
});

afterAll(async () => {
  await client?.endAsync();
  if (d && d.proc.exitCode === null) await d.stop();
  await broker?.stop();
});

const IOT = [[1, 20, 30], [2, 31, 40], [1, 35, 50], [2, 20, 30], [1, 80, 90], [2, 45, 20], [1, 10, 90], [2, 12, 30], [1, 65, 35], [2, 55, 32]];

function tc1(id: string, topic: string) {
  return {
    id,
    graph: {
      nodes: {
        demo: { type: "source", nodeType: "mqtt", props: { datasource: "devices/+/messages", server: "" } },
        humidityFilter: { type: "operator", nodeType: "filter", props: { expr: "humidity > 30" } },
        logfunc: { type: "operator", nodeType: "function", props: { expr: "log(temperature) as log_temperature" } },
        tempFilter: { type: "operator", nodeType: "filter", props: { expr: "log_temperature < 1.6" } },
        pick: { type: "operator", nodeType: "pick", props: { fields: ["log_temperature as temp", "humidity"] } },
        mqttout: { type: "sink", nodeType: "mqtt", props: { server: broker.url, topic } },
      },
      topo: { sources: ["demo"], edges: { demo: ["humidityFilter"], humidityFilter: ["logfunc"], logfunc: ["tempFilter"], tempFilter: ["pick"], pick: ["mqttout"] } },
    },
  };
}

async function status(id: string): Promise<Record<string, unknown>> {
  const r = await d.call("GET", `/rules/${id}/status`);
  expect(r.status).toBe(200);
  return JSON.parse(r.text) as Record<string, unknown>;
}

test("TC1 through the daemon: outputs, status keys named after graph nodes, topology, explain, schema", async () => {
  const def = tc1("tc1", "graph/tc1");
  (def.graph.nodes.demo.props as Record<string, unknown>) = { datasource: "devices/+/messages", confKey: "g" };
  const r = await d.call("POST", "/rules", def);
  expect([r.status, r.text]).toEqual([201, "Rule tc1 was created successfully."]);
  // The rule's subscription is asynchronous: wait for the source to connect.
  await waitFor(async () => (await status("tc1"))["source_demo_0_connection_status"] === 1, "the source to connect", 8000, 50);
  for (const [dev, temperature, humidity] of IOT) await client.publishAsync(`devices/${dev}/messages`, JSON.stringify({ temperature, humidity }), { qos: 1 });
  await waitFor(() => (received.get("graph/tc1")?.length ?? 0) === 3, "3 payloads");
  const out = received.get("graph/tc1")!.map((s) => JSON.parse(s) as { humidity: number; temp: number }[]);
  expect(out.map((a) => a[0]!.humidity)).toEqual([40, 50, 90]);
  // Go's Log10 to the last bit (JS Math.log10(35) is 1.5440680443502757).
  expect(out.map((a) => a[0]!.temp)).toEqual([1.4913616938342726, 1.5440680443502754, 1]);
  expect(out[2]).toEqual([{ humidity: 90, temp: 1 }]);
  const st = await status("tc1");
  expect(st["source_demo_0_records_in_total"]).toBe(10);
  expect(st["sink_mqttout_0_records_in_total"]).toBe(3);
  expect(st["op_humidityFilter_0_records_out_total"]).toBe(6);
  // (floe ends a running rule's status with its event_loop_lag_* keys: not a node.)
  const nodeKeys = Object.keys(st).slice(5).filter((k) => !k.startsWith("event_loop_lag_"));
  const prefixes = [...new Set(nodeKeys.map((k) => k.replace(/_0_[a-z_]+$/, "")))];
  expect(prefixes).toEqual(["source_demo", "op_2_decoder", "op_humidityFilter", "op_logfunc", "op_tempFilter", "op_pick", "op_mqttout_0_transform", "op_mqttout_1_encode", "sink_mqttout"]);
  const topo = await d.call("GET", "/rules/tc1/topo");
  expect(topo.text).toContain(
    '{"sources":["source_demo"],"edges":{"op_2_decoder":["op_humidityFilter"],"op_humidityFilter":["op_logfunc"],"op_logfunc":["op_tempFilter"],"op_mqttout_0_transform":["op_mqttout_1_encode"],"op_mqttout_1_encode":["sink_mqttout"],"op_pick":["op_mqttout_0_transform"],"op_tempFilter":["op_pick"],"source_demo":["op_2_decoder"]}}',
  );
  const ex = await d.call("GET", "/rules/tc1/explain");
  expect(ex.status).toBe(400);
  expect(ex.text).toContain("explain rules error: only support explain sql now");
  const got = await d.call("GET", "/rules/tc1");
  expect(JSON.parse(got.text).graph.nodes.pick.props.fields).toEqual(["log_temperature as temp", "humidity"]);
});

test("validate plans the graph: sources with the source_ prefix, or 422 with the planning error", async () => {
  const ok = await d.call("POST", "/rules/validate", tc1("v1", "graph/v1"));
  expect([ok.status, JSON.parse(ok.text)]).toEqual([200, { sources: ["source_demo"], valid: true }]);
  const bad = tc1("v2", "graph/v2");
  (bad.graph.nodes.logfunc as { nodeType: string }).nodeType = "foo";
  const r = await d.call("POST", "/rules/validate", bad);
  expect([r.status, r.text]).toEqual([422, "invalid ruleDef graph: unknown operator type foo"]);
});

test("create answers planning errors as 400 code 1000", async () => {
  const cases: [(g: ReturnType<typeof tc1>["graph"]) => void, string][] = [
    [(g) => ((g.nodes.logfunc as { nodeType: string }).nodeType = "foo"), "unknown operator type foo"],
    [(g) => ((g.topo.edges as Record<string, string[]>).pick = ["nowhere"]), "node nowhere is not defined"],
    [(g) => ((g.topo.edges as Record<string, string[]>).tempFilter = ["humidityFilter"]), "can't find node "],
    [(g) => ((g.nodes.mqttout as { nodeType: string }).nodeType = "kafka"), "sink kafka is not defined"],
    [(g) => ((g.nodes.logfunc.props as Record<string, unknown>) = { expr: "temperature + 1" }), "parse function logfunc with map[expr:temperature + 1] error: expr temperature + 1 is not ast.Call"],
  ];
  for (const [mutate, msg] of cases) {
    const def = tc1("bad", "graph/bad");
    mutate(def.graph);
    const r = await d.call("POST", "/rules", def);
    expect([r.status, JSON.parse(r.text)]).toEqual([400, { error: 1000, message: msg }]);
  }
  const both = await d.call("POST", "/rules", { ...tc1("both", "x"), sql: "SELECT * FROM s" });
  expect(JSON.parse(both.text).message).toBe("invalid rule json: Rule both has both sql and graph.");
});

test("a switch graph with two sinks, updated to a different graph and then to SQL", { timeout: 30_000 }, async () => {
  await d.call("POST", "/streams", { sql: 'CREATE STREAM gsw () WITH (DATASOURCE="graph-in/sw", CONF_KEY="g")' });
  const sw = (cases: string[]) => ({
    id: "sw",
    graph: {
      nodes: {
        abc: { type: "source", nodeType: "mqtt", props: { sourceName: "gsw" } },
        sw: { type: "operator", nodeType: "switch", props: { cases, stopAtFirstMatch: true } },
        k1: { type: "sink", nodeType: "mqtt", props: { server: broker.url, topic: "graph/k1", sendSingle: true } },
        k2: { type: "sink", nodeType: "mqtt", props: { server: broker.url, topic: "graph/k2", sendSingle: true } },
      },
      topo: { sources: ["abc"], edges: { abc: ["sw"], sw: [["k1"], ["k2"]] } },
    },
  });
  expect((await d.call("POST", "/rules", sw(["temperature > 20", "temperature <= 20"]))).status).toBe(201);
  await waitFor(async () => (await status("sw"))["source_gsw_0_connection_status"] === 1, "the source to connect", 8000, 50);
  // The subscription is ready once a probe (temperature 30: no case of the updated graph holds,
  // the SQL rule filters it out) reaches the source.
  const connected = (id: string, src: string, before: unknown) =>
    waitFor(async () => {
      const st = await status(id);
      if (st.lastStartTimestamp !== before && (st[`source_${src}_0_records_in_total`] as number) > 0) return true;
      if (st[`source_${src}_0_connection_status`] === 1) await client.publishAsync("graph-in/sw", JSON.stringify({ temperature: 30, probe: true }), { qos: 1 });
      return false;
    }, `rule ${id} to receive a probe`, 8000, 50);
  const publish = async () => {
    for (const [, temperature, humidity] of IOT) await client.publishAsync("graph-in/sw", JSON.stringify({ temperature, humidity }), { qos: 1 });
  };
  await publish();
  await waitFor(() => received.get("graph/k1")?.length === 6 && received.get("graph/k2")?.length === 4, "switch outputs");
  expect(received.get("graph/k2")!.map((s) => JSON.parse(s).temperature)).toEqual([20, 20, 10, 12]);
  const st = await status("sw");
  expect(st["op_sw_0_records_out_total"]).toBe(0);
  expect(st["sink_k1_0_records_in_total"]).toBe(6);
  expect(JSON.parse((await d.call("GET", "/rules/sw/topo")).text).edges.op_name_1).toEqual(["op_k2_0_transform"]);
  // Update: the cases change; the rule restarts with the new graph.
  let before = (await status("sw")).lastStartTimestamp;
  const u = await d.call("PUT", "/rules/sw", sw(["temperature > 50", "temperature < 15"]));
  expect([u.status, u.text]).toEqual([200, "Rule sw was updated successfully."]);
  await connected("sw", "gsw", before);
  received.set("graph/k1", []);
  received.set("graph/k2", []);
  await publish();
  await waitFor(() => received.get("graph/k1")?.length === 3 && received.get("graph/k2")?.length === 2, "updated switch outputs");
  expect(received.get("graph/k2")!.map((s) => JSON.parse(s).temperature)).toEqual([10, 12]);
  // A bad update is refused with the PUT prefix and leaves the rule as it was.
  const bad = sw([]);
  const ub = await d.call("PUT", "/rules/sw", bad);
  expect([ub.status, JSON.parse(ub.text).message]).toEqual([400, "Update rule error: parse switch sw with map[cases:[] stopAtFirstMatch:true] error: switch node must have at least one case"]);
  // And a graph rule may become a SQL rule.
  before = (await status("sw")).lastStartTimestamp;
  const sql = await d.call("PUT", "/rules/sw", { id: "sw", sql: "SELECT temperature FROM gsw WHERE temperature > 70", actions: [{ mqtt: { server: broker.url, topic: "graph/sql", sendSingle: true } }] });
  expect(sql.status).toBe(200);
  await connected("sw", "gsw", before);
  await publish();
  await waitFor(() => received.get("graph/sql")?.length === 1, "sql output");
  expect(JSON.parse(received.get("graph/sql")![0]!)).toEqual({ temperature: 80 });
});
