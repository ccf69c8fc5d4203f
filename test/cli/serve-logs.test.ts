/**
 * The daemon's log helps when something is wrong: decode and row errors reach it rate-limited
 * (the first in full, then counts), `--log-level debug` shows rule starts with their options, MQTT
 * connections and subscriptions and checkpoints, a missing broker logs `Failed to connect` with the
 * kind of failure and the next retry time, and a shutdown says so.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connectAsync } from "mqtt";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, tempHome, type DaemonProc } from "../server/daemon.ts";

let broker: Mosquitto;
let d: DaemonProc;

beforeAll(async () => {
  broker = await Mosquitto.start();
  d = await startFloe(tempHome(), { MQTT_SOURCE__DEFAULT__SERVER: broker.url }, ["--log-level", "debug"]);
});

afterAll(async () => {
  await d?.stop();
  await broker?.stop();
});

const lines = (re: RegExp) => d.stderr().split("\n").filter((l) => re.test(l));

test("debug shows the rule start with its options, the MQTT connection, the subscription and checkpoints", async () => {
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM logs () WITH (TYPE="mqtt", DATASOURCE="logs/in", FORMAT="json")' })).status).toBe(201);
  const rule = { id: "lg", sql: "SELECT temperature / humidity AS r FROM logs", actions: [{ nop: {} }], options: { qos: 1, checkpointInterval: 50 } };
  expect((await d.call("POST", "/rules", rule)).status).toBe(201);
  await waitFor(() => lines(/checkpoint saved/).length > 0, "a checkpoint line");
  expect(lines(/rule lg starting with options/)[0]).toContain('level=debug msg="rule lg starting with options {\\"qos\\":1,\\"checkpointInterval\\":50');
  expect(lines(/level=debug msg="mqtt mqtt:\/\/127\.0\.0\.1:\d+: connected"/).length).toBeGreaterThan(0);
  expect(lines(/level=debug msg="mqtt mqtt:\/\/127\.0\.0\.1:\d+: subscribed to logs\/in at qos 1"/).length).toBe(1);
  expect(lines(/level=debug msg="rule lg: checkpoint saved \(\d+ characters of state, sources /).length).toBeGreaterThan(0);
}, 30_000);

test("decode and row errors reach the log: the first ten in full, then a count per interval", async () => {
  const pub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
  // The logger (consola) folds a run of identical lines into one `… (repeated N times)` line, which stands for N.
  const shown = () => lines(/level=warn msg="rule lg: source logs: /).reduce((n, l) => n + Number(/\(repeated (\d+) times\)"/.exec(l)?.[1] ?? 1), 0);
  try {
    await pub.publishAsync("logs/in", "{not json", { qos: 1 });
    for (let i = 0; i < 14; i++) await pub.publishAsync("logs/in", JSON.stringify({ temperature: i, humidity: 0 }), { qos: 1 });
    await waitFor(async () => {
      const st = JSON.parse((await d.call("GET", "/rules/lg/status")).text) as Record<string, unknown>;
      return Object.entries(st).reduce((n, [k, v]) => n + (k.endsWith("_exceptions_total") ? Number(v) : 0), 0) === 15;
    }, "15 errors counted");
    await waitFor(() => shown() === 10, "ten errors in full");
    const warn = lines(/level=warn msg="rule lg: source logs: /);
    expect(warn[0]).toMatch(/msg="rule lg: source logs: invalid character in JSON payload: /);
    expect(warn[1]).toContain("rule lg: source logs: run Select error: alias: r expr: binaryExpr:{ logs.temperature / logs.humidity } meet error, err:divided by zero");
    // The other five are counted in one line when the interval (10 s in the daemon) ends.
    await waitFor(() => lines(/rule lg: 5 more error\(s\) in the last 10 s \(last: source logs: run Select error: /).length === 1, "the count line", 15_000, 50);
    expect(shown()).toBe(10);
  } finally {
    await pub.endAsync();
  }
}, 30_000);

test("a missing broker logs Failed to connect with the reason and the next retry time", async () => {
  const rule = { id: "nobroker", sql: "SELECT * FROM logs", actions: [{ mqtt: { server: "tcp://127.0.0.1:1", topic: "out" } }] };
  expect((await d.call("POST", "/rules", rule)).status).toBe(201);
  await waitFor(() => lines(/Failed to connect to mqtt:\/\/127\.0\.0\.1:1 /).length >= 2, "two failed attempts");
  const [first, second] = lines(/Failed to connect to mqtt:\/\/127\.0\.0\.1:1 /);
  const shape = /level=warn msg="Failed to connect to mqtt:\/\/127\.0\.0\.1:1 \(refused\): network Error : dial tcp 127\.0\.0\.1:1: connect: connection refused; next retry in (\d+) ms at \d{4}-\d\d-\d\dT[\d:.]+Z"/;
  expect(first).toMatch(shape);
  // The retries back off.
  expect(Number(shape.exec(second!)![1])).toBeGreaterThan(Number(shape.exec(first!)![1]));
  expect((await d.call("DELETE", "/rules/nobroker")).status).toBe(200);
}, 30_000);

test("a shutdown is logged", async () => {
  expect(await d.stop("SIGTERM")).toBe(0);
  expect(lines(/level=info msg="shutting down: stopping 1 running rule\(s\), waiting up to \d+ ms for their sinks"/).length).toBe(1);
  expect(lines(/level=info msg="stopped in \d+ ms \(exit status 0\)"/).length).toBe(1);
}, 30_000);
