/**
 * Regressions for what the long hostile run (bench/hostile.ts, docs/hostile-suite.md) found; the
 * payload findings are cases of payload-cases.ts. Each test names the seed that found it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { statusText } from "../../lib/server/rule-manager.ts";
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

// Seed 424242: a JSON payload with a control byte outside a string put the parser's message, which
// quotes the byte, into last_exception; the rule's status (Go %q: `\x01`) was then not JSON, and
// the run's own status read failed. The payload is a case of payload-cases.ts; this is the text.
test("the legacy status text stays JSON: the escapes JSON lacks are written as \\u00XX, the rest as Go's %q", () => {
  const text = statusText([["last_exception", 'a\x01\x07\x0b\x7f \\x41 "q" é\n'], ["n", 1]]);
  expect(text).toBe('{\n  "last_exception": "a\\u0001\\u0007\\u000b\\u007f \\\\x41 \\"q\\" é\\n",\n  "n": 1\n}');
  expect(JSON.parse(text)).toEqual({ last_exception: 'a\x01\x07\x0b\x7f \\x41 "q" é\n', n: 1 });
});
