/** The data peek's routes: on for a running rule only, one tap per node (tracing on and off meanwhile), off on request. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { freePort } from "../../helpers/data-server.ts";
import { waitFor } from "../../helpers/runtime.ts";
import { startFloe, tempHome, type DaemonProc } from "../daemon.ts";

let d: DaemonProc;
let push: (v: number) => Promise<void>;

type Nodes = Record<string, { seen: number; rows: { t: number; data: string }[] }>;

async function peek(): Promise<Nodes> {
  const r = await d.call("POST", "/ui/api/rules/pk/peek");
  expect(r.status).toBe(200);
  return (JSON.parse(r.text) as { nodes: Nodes }).nodes;
}

beforeAll(async () => {
  const dataPort = freePort();
  d = await startFloe(tempHome(), { KUIPER__SOURCE__HTTPSERVERPORT: String(dataPort) });
  push = async (v) => {
    expect(await (await fetch(`http://127.0.0.1:${dataPort}/pk`, { method: "POST", body: JSON.stringify({ v }) })).text()).toBe("ok");
  };
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM pk (v BIGINT) WITH (TYPE="httppush", DATASOURCE="/pk", FORMAT="json")' })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "pk", sql: "SELECT v FROM pk WHERE v > 1", actions: [{ nop: {} }] })).status).toBe(201);
  await waitFor(async () => JSON.parse((await d.call("GET", "/rules/pk/status")).text).source_pk_0_connection_status === 1, "the httppush endpoint", 10_000, 50);
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
  await waitFor(async () => JSON.parse((await d.call("GET", "/rules/pk/status")).text).source_pk_0_connection_status === 1, "the httppush endpoint again", 10_000, 50);
});

test("every source and operator is tapped once, through tracing switched on and off; DELETE ends the peek", async () => {
  const start = await peek();
  expect(Object.keys(start).sort()).toEqual(["op_2_decoder", "op_3_filter", "op_4_project", "source_pk"]);
  for (const n of Object.values(start)) expect(n).toEqual({ seen: 0, rows: [] });
  await push(5);
  await push(0);
  expect((await d.call("POST", "/rules/pk/trace/start", { strategy: "always" })).status).toBe(200);
  await push(7);
  expect((await d.call("POST", "/rules/pk/trace/stop")).status).toBe(200);
  await peek(); // asked again, as the console does every second: the same taps
  await push(9);
  await waitFor(async () => (await peek()).op_3_filter!.seen === 3, "what the filter passed");
  const n = await peek();
  expect([n.source_pk!.seen, n.op_2_decoder!.seen, n.op_3_filter!.seen, n.op_4_project!.seen]).toEqual([4, 4, 3, 3]);
  expect(JSON.parse(n.source_pk!.rows[0]!.data)).toEqual({ v: 5 });
  const off = await d.call("DELETE", "/ui/api/rules/pk/peek");
  expect([off.status, JSON.parse(off.text)]).toEqual([200, { on: false }]);
  // The next one starts afresh.
  expect((await peek()).source_pk!.seen).toBe(0);
  expect((await d.call("DELETE", "/ui/api/rules/pk/peek")).status).toBe(200);
});
