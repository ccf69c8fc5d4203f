/**
 * Connectivity checks (rest-api.md §13) as eKuiper 2.x answers them: connectors that reach a
 * server are pinged and fail in Go's words; the others refuse with `doesn't support ping
 * connection`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { freePort, Mosquitto } from "../helpers/mosquitto.ts";
import { startFloe, type DaemonProc } from "./daemon.ts";

let d: DaemonProc;
let broker: Mosquitto;

beforeAll(async () => {
  [d, broker] = await Promise.all([startFloe(), Mosquitto.start()]);
});

afterAll(async () => {
  await d?.stop();
  await broker?.stop();
});

const check = async (kind: string, type: string, props: object = {}) => {
  const r = await d.call("POST", `/metadata/${kind}/connection/${type}`, props);
  return [r.status, r.text];
};

test.each([
  ["sources", ["httppull", "httppush", "file", "memory", "websocket", "simulator"], "source"],
  ["sinks", ["rest", "file", "memory", "websocket", "log", "nop"], "sink"],
  ["lookups", ["httppull", "memory"], "lookup source"],
] as const)("%s that cannot be pinged refuse with eKuiper's text", async (kind, types, noun) => {
  for (const type of types) expect(await check(kind, type)).toEqual([400, `{"error":1000,"message":"${noun} ${type} doesn't support ping connection"}\n`]);
});

test("an unknown connector type is not found before anything else", async () => {
  expect(await check("sources", "nope")).toEqual([400, '{"error":5000,"message":"source nope not found"}\n']);
  expect(await check("lookups", "mqtt")).toEqual([400, '{"error":5000,"message":"lookup source mqtt not found"}\n']);
});

test("an MQTT check connects: a live broker answers 200, a refused dial reads as eKuiper's paho error", async () => {
  expect(await check("sources", "mqtt", { server: broker.url })).toEqual([200, ""]);
  expect(await check("sinks", "mqtt", { server: broker.url, protocolVersion: "5" })).toEqual([200, ""]);
  const port = await freePort();
  const server = `tcp://127.0.0.1:${port}`;
  expect(await check("sources", "mqtt", { server })).toEqual([
    400,
    `{"error":1003,"message":"found error when connecting for ${server}: network Error : dial tcp 127.0.0.1:${port}: connect: connection refused"}\n`,
  ]);
  expect(await check("sinks", "mqtt", {})).toEqual([400, '{"error":1000,"message":"missing server property"}\n']);
});

test("a sql check runs a query: SQLite answers, a refused PostgreSQL dial reads as Go's", async () => {
  for (const kind of ["sources", "sinks", "lookups"]) expect(await check(kind, "sql", { dburl: "sqlite::memory:" })).toEqual([200, ""]);
  const port = await freePort();
  expect(await check("sinks", "sql", { dburl: `postgres://u@127.0.0.1:${port}/db` })).toEqual([400, `{"error":1003,"message":"dial tcp 127.0.0.1:${port}: connect: connection refused"}\n`]);
  expect(await check("sources", "sql", {})).toEqual([400, '{"error":1000,"message":"dburl should be set"}\n']);
});

test("a source confKey holding only a connectionSelector is stored: the server comes from the connection", async () => {
  const r = await d.call("PUT", "/metadata/sources/mqtt/confKeys/ttt", { connectionSelector: "conn1" });
  expect([r.status, r.text]).toEqual([200, ""]);
  expect(JSON.parse((await d.call("GET", "/metadata/sources/yaml/mqtt")).text).ttt).toEqual({ connectionSelector: "conn1" });
  const bad = await d.call("PUT", "/metadata/sources/mqtt/confKeys/ttt2", { qos: 1 });
  expect([bad.status, bad.text]).toEqual([400, '{"error":1000,"message":"missing server property"}\n']);
});
