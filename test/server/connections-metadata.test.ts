/**
 * Named connections of the non-MQTT types (rest-api.md §12) and the connector metadata lists
 * (rest-api.md §13): only the connectors floe implements are accepted and claimed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitFor } from "../helpers/wait.ts";
import { startFloe, type DaemonProc } from "./daemon.ts";

let d: DaemonProc;
/** The data server's port (held open by a trial created in beforeAll). */
let dataPort: number;

beforeAll(async () => {
  d = await startFloe();
  const sim = `CREATE STREAM sim () WITH (TYPE="simulator", EXTRA="{\\"data\\":[{\\"n\\":1}],\\"interval\\":20,\\"loop\\":true}")`;
  expect((await d.call("POST", "/streams", { sql: sim })).status).toBe(201);
  dataPort = (JSON.parse((await d.call("POST", "/ruletest", { id: "hold", sql: "SELECT * FROM sim" })).text) as { port: number }).port;
});

afterAll(async () => {
  await d?.stop();
});

const names = async (path: string) => (JSON.parse((await d.call("GET", path)).text) as { name: string; type: string }[]).map((m) => m.name);

test("connection types floe has no connector for are unknown", async () => {
  for (const typ of ["nng", "redisPub", "kafka"]) {
    const r = await d.call("POST", "/connections", { id: `c_${typ}`, typ, props: {} });
    expect([r.status, r.text]).toEqual([400, '{"error":1000,"message":"create connection failed: unknown connection type"}\n']);
  }
});

test("a websocket connection's props serve the sinks that select it", async () => {
  expect((await d.call("POST", "/connections", { id: "ws1", typ: "websocket", props: { path: "/ws1" } })).text).toBe("success");
  expect(JSON.parse((await d.call("GET", "/connections/ws1")).text)).toEqual({ id: "ws1", typ: "websocket", props: { path: "/ws1" }, isNamed: true });
  const r = await d.call("POST", "/rules", { id: "wsout", sql: "SELECT n FROM sim", actions: [{ websocket: { connectionSelector: "ws1", sendSingle: true } }] });
  expect([r.status, r.text]).toEqual([201, "Rule wsout was created successfully."]);
  const frames: string[] = [];
  let ws: WebSocket | undefined;
  // The sink opens its endpoint asynchronously: connect again until a frame arrives.
  await waitFor(() => {
    if (frames.length > 0) return true;
    if (!ws || ws.readyState === WebSocket.CLOSED) {
      ws = new WebSocket(`ws://127.0.0.1:${dataPort}/ws1`);
      ws.onmessage = (m) => frames.push(String(m.data));
    }
    return false;
  }, "a frame from the websocket sink", 5000, 50).finally(() => ws?.close());
  expect(frames[0]).toBe('{"n":1}');
  // The rule holds no client of the connection (only MQTT connections are live), so it may be replaced.
  expect((await d.call("PUT", "/connections/ws1", { typ: "websocket", props: { path: "/ws2" } })).text).toBe("success");
  expect((await d.call("DELETE", "/rules/wsout")).status).toBe(200);
});

test("a selector naming a connection of another type is refused by type", async () => {
  expect((await d.call("POST", "/connections", { id: "sse1", typ: "sse", props: { endpoint: "/events" } })).status).toBe(201);
  const r = await d.call("POST", "/rules", { id: "m", sql: "SELECT n FROM sim", actions: [{ mqtt: { topic: "t", connectionSelector: "sse1" } }] });
  expect([r.status, r.text]).toEqual([400, '{"error":1003,"message":"connection sse1 should be mqtt connection"}\n']);
  const none = await d.call("POST", "/rules", { id: "m", sql: "SELECT n FROM sim", actions: [{ sse: { connectionSelector: "nope" } }] });
  expect(none.text).toBe('{"error":1003,"message":"connection nope not existed"}\n');
  const ok = await d.call("POST", "/rules", { id: "s", sql: "SELECT n FROM sim", actions: [{ sse: { connectionSelector: "sse1" } }] });
  expect([ok.status, ok.text]).toEqual([201, "Rule s was created successfully."]);
  expect(JSON.parse((await d.call("GET", "/connections")).text).map((c: { id: string; typ: string }) => `${c.typ}.${c.id}`)).toEqual(["sse.sse1", "websocket.ws1"]);
  await d.call("DELETE", "/rules/s");
});

test("metadata lists the connectors floe implements, as eKuiper names them", async () => {
  expect(await names("/metadata/sources")).toEqual(["file", "httppull", "httppush", "memory", "mqtt", "redisSub", "simulator", "sql", "websocket"]);
  expect(await names("/metadata/sources?kind=LOOKUP")).toEqual(["httppull", "memory", "redis", "simulator", "sql"]);
  expect(await names("/metadata/sinks")).toEqual(["file", "log", "logToMemory", "memory", "mqtt", "nop", "redis", "redisPub", "rest", "sql", "sse", "websocket"]);
  expect(await names("/metadata/connections")).toEqual(["httppush", "mqtt", "sse", "websocket"]);
  const sse = JSON.parse((await d.call("GET", "/metadata/sinks/sse")).text) as { properties: { name: string }[]; type: string };
  expect([sse.type, sse.properties.map((p) => p.name)]).toEqual(["internal", ["endpoint"]]);
  expect(JSON.parse((await d.call("GET", "/metadata/sources/redisSub")).text).type).toBe("internal");
  for (const path of ["/metadata/sources/neuron", "/metadata/sinks/neuron", "/metadata/sinks/stdout", "/metadata/connections/nng"]) {
    const r = await d.call("GET", path);
    expect([r.status, r.text]).toEqual([400, `{"error":5000,"message":"This plugin was not found:${path.split("/").pop()}"}\n`]);
  }
});
