/** The data peek's routes: on for a running rule only, every node tapped from the start, off on request. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFloe, type DaemonProc } from "../daemon.ts";

let d: DaemonProc;

beforeAll(async () => {
  d = await startFloe();
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM pk (v BIGINT) WITH (TYPE="memory", DATASOURCE="pk", FORMAT="json")' })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "pk", sql: "SELECT v FROM pk WHERE v > 1", actions: [{ nop: {} }] })).status).toBe(201);
});

afterAll(async () => {
  await d?.stop();
});

test("a peek on an unknown rule is 404 and on a stopped one 400, with eKuiper's error body", async () => {
  const none = await d.call("POST", "/ui/api/rules/nosuch/peek");
  expect([none.status, JSON.parse(none.text)]).toEqual([404, { error: 1002, message: "Rule nosuch is not found in registry" }]);
  expect((await d.call("POST", "/rules/pk/stop")).status).toBe(200);
  const stopped = await d.call("POST", "/ui/api/rules/pk/peek");
  expect([stopped.status, JSON.parse(stopped.text)]).toEqual([400, { error: 1000, message: "Rule pk is not running" }]);
  expect((await d.call("POST", "/rules/pk/start")).status).toBe(200);
});

test("on a running rule every source and operator gets a tap; DELETE turns it off", async () => {
  const r = await d.call("POST", "/ui/api/rules/pk/peek");
  expect(r.status).toBe(200);
  const body = JSON.parse(r.text) as { on: boolean; ttlMs: number; nodes: Record<string, { seen: number; rows: unknown[] }> };
  expect(body.on).toBe(true);
  expect(body.ttlMs).toBe(30_000);
  expect(Object.keys(body.nodes).sort()).toEqual(["op_2_filter", "op_3_project", "source_pk"]);
  for (const n of Object.values(body.nodes)) expect(n).toEqual({ seen: 0, rows: [] });
  // Asked again (the console does once a second): the same nodes.
  expect(Object.keys((JSON.parse((await d.call("POST", "/ui/api/rules/pk/peek")).text) as typeof body).nodes).length).toBe(3);
  const off = await d.call("DELETE", "/ui/api/rules/pk/peek");
  expect([off.status, JSON.parse(off.text)]).toEqual([200, { on: false }]);
});
