/**
 * One UDF's fault stays in that UDF. A script that faults its WebAssembly instance (source nested
 * 300,000 deep passed to `eval`) once made the shared module restart for everyone: a harmless UDF
 * in another rule failed 6 of 20 rows with `the JavaScript sandbox is restarting after a fault`.
 * Now each UDF has an instance of its own: two rules read the same stream, one calling the hostile
 * UDF on every row; every row of the hostile rule is its own row error, and 0 of N rows of the
 * harmless rule fail.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { freePort } from "../helpers/data-server.ts";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

const N = 40;
const port = freePort();
let d: DaemonProc;

beforeAll(async () => {
  d = await startFloe(tempHome(), { KUIPER__SOURCE__HTTPSERVERPORT: String(port) });
}, 30_000);

afterAll(async () => {
  await d?.stop();
});

async function status(rule: string): Promise<Record<string, unknown>> {
  return JSON.parse((await d.call("GET", `/rules/${rule}/status`)).text) as Record<string, unknown>;
}

test(`a UDF faulting its instance on every row fails those rows only: 0 of ${N} rows of a harmless UDF in another rule fail`, async () => {
  const evil = 'function evil(v) { return eval("(".repeat(300000) + v + ")".repeat(300000)); }';
  expect((await d.call("POST", "/udf/javascript", { id: "evil", script: evil })).status).toBe(201);
  expect((await d.call("POST", "/udf/javascript", { id: "nice", script: "var calls = 0; function nice(v) { calls++; return v * 2 + calls * 0; }" })).status).toBe(201);
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM inbox () WITH (TYPE="httppush", DATASOURCE="/inbox", FORMAT="json")' })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "hostile", sql: "SELECT evil(v) AS e FROM inbox", actions: [{ nop: {} }] })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "harmless", sql: "SELECT nice(v) AS n FROM inbox", actions: [{ nop: {} }] })).status).toBe(201);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/inbox`, { method: "POST", body: '{"v":0}' }).catch(() => undefined))?.status === 200, "the endpoint");
  for (let v = 1; v < N; v++) expect((await fetch(`http://127.0.0.1:${port}/inbox`, { method: "POST", body: JSON.stringify({ v }) })).status).toBe(200);

  await waitFor(async () => (await status("harmless")).sink_nop_0_0_records_out_total === N, `${N} results of the harmless rule`, 30_000, 20);
  await waitFor(async () => (await status("hostile")).op_3_project_0_exceptions_total === N, `${N} row errors of the hostile rule`, 30_000, 20);
  const harmless = await status("harmless");
  const hostile = await status("hostile");
  expect(harmless.op_3_project_0_exceptions_total).toBe(0);
  expect(harmless.op_3_project_0_last_exception).toBe("");
  expect([harmless.status, hostile.status]).toEqual(["running", "running"]);
  expect(String(hostile.op_3_project_0_last_exception)).toMatch(/call func evil error: (stack overflow|the JavaScript sandbox is restarting after a fault)$/);
  expect(hostile.sink_nop_0_0_records_out_total).toBe(0);
});
