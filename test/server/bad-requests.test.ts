/**
 * Bad requests get eKuiper-shaped 4xx answers with eKuiper's exact texts (rest-api.md, rest_test
 * literals), and the daemon keeps serving afterwards.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitFor } from "../helpers/wait.ts";
import { startFloe, type DaemonProc } from "./daemon.ts";

let d: DaemonProc;

beforeAll(async () => {
  d = await startFloe(undefined, { KUIPER__BASIC__MAXBODYSIZE: "65536" });
  await d.call("POST", "/streams", { sql: 'CREATE STREAM alert () WITH (DATASOURCE="0", TYPE="mqtt")' });
});

afterAll(async () => {
  await d?.stop();
});

const TEXT = "text/plain; charset=utf-8";

const CASES: [string, string, string, string | object | undefined, number, string][] = [
  ["malformed rule JSON", "POST", "/rules", '{"id":', 400, '{"error":1000,"message":"invalid rule json: Parse rule {\\"id\\": error : unexpected end of JSON input."}\n'],
  ["rule id with a slash", "POST", "/rules", { id: "rule3/21", sql: "select * from alert", actions: [{ nop: {} }] }, 400, '{"error":1000,"message":"invalid rule json: id \'rule3/21\' contains invalid characters: only alphanumeric, hyphens and underscores are allowed"}\n'],
  ["invalid SQL", "POST", "/rules", { id: "r9", sql: "SELECT -abc FROM demo", actions: [{ nop: {} }] }, 400, '{"error":1000,"message":"invalid rule json: found \\"-\\", expected expression."}\n'],
  ["missing actions", "POST", "/rules", { id: "r9", sql: "SELECT * FROM alert" }, 400, '{"error":1000,"message":"invalid rule json: Missing rule actions."}\n'],
  ["unknown stream", "POST", "/rules", { id: "r9", sql: "SELECT * FROM nope", actions: [{ nop: {} }] }, 400, '{"error":2101,"message":"fail to get stream nope, please check if stream is created"}\n'],
  ["describe unknown rule", "GET", "/rules/rule32211", undefined, 404, '{"error":1002,"message":"Describe rule error: Rule rule32211 is not found."}\n'],
  ["status of unknown rule", "GET", "/rules/nope/status", undefined, 404, '{"error":1002,"message":"get rule status error: Rule nope is not found"}\n'],
  ["start unknown rule", "POST", "/rules/nope/start", undefined, 404, '{"error":1002,"message":"start rule error: Rule nope is not found in registry, please check if it is created"}\n'],
  ["delete unknown rule", "DELETE", "/rules/nope", undefined, 400, '{"error":1000,"message":"Delete rule error: rule nope not found"}\n'],
  ["explain unknown rule", "GET", "/rules/rule32211/explain", undefined, 404, '{"error":1002,"message":"explain rules error: Rule rule32211 is not found."}\n'],
  ["GET /rules/validate is describe", "GET", "/rules/validate", undefined, 404, '{"error":1002,"message":"Describe rule error: Rule validate is not found."}\n'],
  ["duplicate stream", "POST", "/streams", { sql: 'CREATE STREAM alert () WITH (DATASOURCE="0")' }, 400, '{"error":3000,"message":"Stream command error: Create stream fails: Item alert already exists."}\n'],
  ["stream body not JSON", "POST", "/streams", "{", 400, '{"error":1000,"message":"Invalid body: Error decoding the statement descriptor: unexpected EOF"}\n'],
  ["drop unknown stream (SQL)", "POST", "/streams", { sql: "DROP STREAM demo" }, 400, '{"error":3000,"message":"Stream command error: Drop stream fails: stream demo is not found."}\n'],
  ["describe unknown stream", "GET", "/streams/demo", undefined, 400, '{"error":3000,"message":"describe stream error: Describe stream fails, demo is not found."}\n'],
  ["delete unknown stream", "DELETE", "/streams/demo", undefined, 404, '{"error":1002,"message":"delete stream error: stream demo is not found"}\n'],
  ["replace with another name", "PUT", "/streams/alert", { sql: 'CREATE STREAM other () WITH (DATASOURCE="0")' }, 400, '{"error":3000,"message":"Stream command error: Replace alert fails: the sql statement must update the alert source."}\n'],
  ["unknown connection", "GET", "/connections/conn9", undefined, 400, '{"error":1000,"message":"connection conn9 not existed"}\n'],
  ["reset_state with a number body", "PUT", "/rules/r1/reset_state", "1", 400, '{"error":1000,"message":"json: cannot unmarshal number into Go value of type server.ruleStateUpdateRequest"}\n'],
  ["ruleset import with both fields", "POST", "/ruleset/import", { content: "{}", file: "/x" }, 400, '{"error":1000,"message":"Invalid body: Cannot specify both content and file: bad request"}\n'],
  ["upload escaping the root", "POST", "/config/uploads", { name: "../../etc/passwd", content: "x" }, 400, '{"error":1000,"message":"Upload error: getFile has error: openat ../../etc/passwd: path escapes from parent"}\n'],
  ["upload with an absolute name", "POST", "/config/uploads", { name: "/tmp/abs.txt", content: "x" }, 400, '{"error":1000,"message":"Upload error: getFile has error: openat /tmp/abs.txt: path escapes from parent"}\n'],
  ["delete an upload outside the root", "DELETE", "/config/uploads/..%2F..%2Fx", undefined, 404, "404 page not found\n"],
  ["unknown path", "GET", "/nope", undefined, 404, "404 page not found\n"],
  ["wrong method", "PATCH", "/streams", undefined, 405, ""],
  ["unknown time zone", "PATCH", "/configs", { timezone: "Mars/Base" }, 400, '{"error":1000,"message":"Invalid TZ: unknown time zone Mars/Base"}\n'],
  ["validate without id", "POST", "/rules/validate", { sql: "select * from alert", actions: [{ nop: {} }] }, 422, "invalid rule json: Missing rule id."],
];

test.each(CASES)("%s", async (_name, method, path, body, status, want) => {
  const headers: Record<string, string> = path === "/config/uploads" ? { "Content-Type": "application/json" } : {};
  const r = await d.call(method, path, body, headers);
  expect([r.status, r.text]).toEqual([status, want]);
  if (want.startsWith('{"error"')) {
    expect(r.headers.get("Content-Type")).toBe(TEXT);
    if (path !== "/configs") expect(r.headers.get("X-Content-Type-Options")).toBe("nosniff");
  }
});

test("an oversized body is refused with 413 and an eKuiper error body", async () => {
  const big = JSON.stringify({ id: "big", sql: "SELECT * FROM alert", actions: [{ nop: {} }], pad: "x".repeat(100_000) });
  const r = await d.call("POST", "/rules", big);
  expect(r.status).toBe(413);
  expect(JSON.parse(r.text)).toEqual({ error: 1000, message: "http: request body too large (limit 65536 bytes)" });
});

test("a duplicate rule is refused with eKuiper's text", async () => {
  const rule = { id: "test12345", sql: "select * from alert", actions: [{ nop: {} }] };
  expect((await d.call("POST", "/rules", rule)).status).toBe(201);
  const r = await d.call("POST", "/rules", rule);
  expect([r.status, r.text]).toEqual([400, '{"error":1000,"message":"rule test12345 already exists"}\n']);
});

test("the stored rule text comes back byte for byte, then re-marshalled after stop", async () => {
  const text = '{"id": "rule321","triggered": true,"sql": "select * from alert","actions": [{"nop": {}}]}';
  expect((await d.call("POST", "/rules", text)).status).toBe(201);
  expect((await d.call("GET", "/rules/rule321")).text).toBe(text);
  expect((await d.call("POST", "/rules/rule321/stop")).status).toBe(200);
  expect((await d.call("GET", "/rules/rule321")).text).toBe('{"actions":[{"nop":{}}],"id":"rule321","sql":"select * from alert","triggered":false}');
});

test("CORS: an admitted origin's preflight gets eKuiper's checks; a foreign origin is refused (test/hostile/origin.test.ts)", async () => {
  const own = d.base;
  const pre = await fetch(d.base + "/anything", { method: "OPTIONS", headers: { Origin: own, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "content-type" } });
  expect(pre.status).toBe(200);
  expect(pre.headers.get("Access-Control-Allow-Origin")).toBe(own);
  expect(pre.headers.get("Access-Control-Allow-Headers")).toBe("Content-Type");
  expect(pre.headers.get("Access-Control-Allow-Methods")).toBe("PUT");
  const bad = await fetch(d.base + "/rules", { method: "OPTIONS", headers: { Origin: own, "Access-Control-Request-Method": "PATCH" } });
  expect(bad.status).toBe(405);
  const get = await fetch(d.base + "/streams", { headers: { Origin: own } });
  expect([get.status, get.headers.get("Access-Control-Allow-Origin")]).toEqual([200, own]);
  const foreign = await fetch(d.base + "/streams", { headers: { Origin: "http://x" } });
  expect([foreign.status, foreign.headers.get("Access-Control-Allow-Origin")]).toEqual([403, null]);
  const ping = await fetch(d.base + "/ping", { headers: { Origin: "http://x" } });
  expect([ping.status, ping.headers.get("Access-Control-Allow-Origin")]).toEqual([200, "*"]);
});

test("after all of the above the daemon still serves", async () => {
  const r = await d.call("GET", "/ping");
  expect(r.status).toBe(200);
  expect(JSON.parse((await d.call("GET", "/streams")).text)).toEqual(["alert"]);
});

test("secrets are masked in descriptions and kept when sent back masked", async () => {
  const rule = { id: "sec", sql: "select * from alert", actions: [{ mqtt: { server: "tcp://127.0.0.1:1", topic: "t", password: "123" } }], triggered: false };
  expect((await d.call("POST", "/rules", rule)).status).toBe(201);
  const shown = JSON.parse((await d.call("GET", "/rules/sec")).text) as typeof rule;
  expect(shown.actions[0]!.mqtt.password).toBe("******");
  expect((await d.call("PUT", "/rules/sec", shown)).status).toBe(200);
  const exported = JSON.parse((await d.call("POST", "/ruleset/export")).text) as { rules: Record<string, string> };
  expect(JSON.parse(exported.rules.sec!).actions[0].mqtt.password).toBe("123");
  expect((await d.call("PUT", "/metadata/sinks/mqtt/confKeys/s1", { server: "tcp://x:1", password: "pw" })).status).toBe(200);
  expect(JSON.parse((await d.call("GET", "/metadata/sinks/yaml/mqtt")).text).s1.password).toBe("******");
});

test("a scheduled rule outside its schedule waits; inside it, it runs", async () => {
  const now = Date.now();
  const past = { id: "sched_out", sql: "select * from alert", actions: [{ nop: {} }], options: { cronDatetimeRange: [{ beginTimestamp: now - 7200_000, endTimestamp: now - 3600_000 }] } };
  const inside = { id: "sched_in", sql: "select * from alert", actions: [{ nop: {} }], options: { cronDatetimeRange: [{ beginTimestamp: now - 60_000, endTimestamp: now + 3600_000 }] } };
  expect((await d.call("POST", "/rules", past)).status).toBe(201);
  expect((await d.call("POST", "/rules", inside)).status).toBe(201);
  const st = (id: string) => d.call("GET", `/rules/${id}/status`).then((r) => JSON.parse(r.text) as { status: string });
  // The scheduler applies the ranges asynchronously: poll until the rule inside its range runs.
  await waitFor(async () => (await st("sched_in")).status === "running", "the rule inside its schedule to run", 10_000, 10);
  expect((await st("sched_out")).status).toBe("stopped: waiting for next schedule.");
  expect((await st("sched_in")).status).toBe("running");
});
