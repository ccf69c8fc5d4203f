/**
 * The event-loop lag probe as the daemon exports it: system information (`GET /`), a running
 * rule's status (after eKuiper's keys) and /metrics (`floe_event_loop_lag_seconds` histogram).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { freePort } from "../helpers/mosquitto.ts";
import { waitForValue } from "../helpers/wait.ts";
import { startFloe, type DaemonProc } from "./daemon.ts";

let d: DaemonProc;
let prom: number;

beforeAll(async () => {
  prom = await freePort();
  d = await startFloe(undefined, { KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: String(prom) });
});

afterAll(async () => {
  await d?.stop();
});

test("GET / carries the last minute's event-loop lag after eKuiper's keys", async () => {
  const info = await waitForValue(async () => {
    const i = JSON.parse((await d.call("GET", "/")).text) as Record<string, unknown>;
    return (i.eventLoopLag as { samples?: number } | undefined)?.samples ? i : undefined;
  }, "the lag probe's first samples", 5000, 10);
  expect(Object.keys(info)).toEqual(["version", "os", "arch", "upTimeSeconds", "cpuUsage", "memoryUsed", "memoryTotal", "eventLoopLag"]);
  const lag = info.eventLoopLag as Record<string, number>;
  expect(Object.keys(lag)).toEqual(["samples", "maxMs", "p99Ms", "p999Ms"]);
  expect(lag.samples).toBeGreaterThan(0);
  expect(lag.maxMs).toBeGreaterThanOrEqual(lag.p999Ms!);
  expect(lag.p999Ms).toBeGreaterThanOrEqual(lag.p99Ms!);
});

test("a running rule's status ends with the lag keys; /metrics has the histogram and window gauges", async () => {
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM lagm () WITH (TYPE="memory", DATASOURCE="lag/in", FORMAT="json")' })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "lagr", sql: "SELECT * FROM lagm", actions: [{ log: {} }] })).status).toBe(201);
  const status = JSON.parse((await d.call("GET", "/rules/lagr/status")).text) as Record<string, unknown>;
  const keys = Object.keys(status);
  expect(keys.slice(0, 2)).toEqual(["status", "message"]);
  expect(keys.slice(-3)).toEqual(["event_loop_lag_max_ms", "event_loop_lag_p99_ms", "event_loop_lag_p999_ms"]);
  expect(typeof status.event_loop_lag_max_ms).toBe("number");
  const text = await (await fetch(`http://127.0.0.1:${prom}/metrics`)).text();
  expect(text).toContain("# TYPE floe_event_loop_lag_seconds histogram\n");
  expect(text).toMatch(/^floe_event_loop_lag_seconds_bucket\{le="0\.01"\} \d+$/m);
  expect(text).toMatch(/^floe_event_loop_lag_seconds_bucket\{le="\+Inf"\} [1-9]\d*$/m);
  expect(text).toMatch(/^floe_event_loop_lag_seconds_count [1-9]\d*$/m);
  expect(text).toMatch(/^floe_event_loop_lag_p999_seconds [\d.e-]+$/m);
  expect(text).toMatch(/^floe_source_duplicates_total\{op="lagm",op_instance="0",rule="lagr",type="source"\} 0$/m);
});
