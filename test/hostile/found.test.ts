/**
 * Regressions for what the long hostile run (bench/hostile.ts, docs/hostile-suite.md) found; the
 * payload findings are cases of payload-cases.ts. Each test names the seed that found it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFloe, type DaemonProc } from "./surface.ts";

let d: DaemonProc;

beforeAll(async () => {
  d = await startFloe();
});

afterAll(async () => {
  await d?.stop();
});

// Seed 424242: a confKey-shaped body with a password and no username made the MQTT check wait out
// its 5 s probe ("timeout"): MQTT.js closes without an error rather than send that CONNECT.
test("an MQTT connectivity check whose client closes before connecting answers at once, not after the 5 s probe", async () => {
  // The probe's own limit reads "timeout": this answer comes from the close.
  const r = await d.call("POST", "/metadata/sources/connection/mqtt", { server: "tcp://127.0.0.1:1", password: "p" });
  expect([r.status, r.text]).toEqual([400, '{"error":1003,"message":"found error when connecting for tcp://127.0.0.1:1: connection closed before the broker answered"}\n']);
});
