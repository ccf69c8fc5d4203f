/**
 * The daemon's data server (config-and-cli.md §2.4) on `source.httpServerPort`: an httppush stream
 * created over REST feeds a rule whose sse sink streams to a real SSE client, with the REST CORS
 * wrapper, and a trial run shares the same listener.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { freePort } from "../helpers/data-server.ts";
import { waitFor, waitForValue } from "../helpers/wait.ts";
import { startFloe, type DaemonProc } from "./daemon.ts";

let d: DaemonProc;
let port: number;
beforeAll(async () => {
  port = freePort();
  d = await startFloe(undefined, { KUIPER__SOURCE__HTTPSERVERPORT: String(port) });
});
afterAll(async () => {
  await d.stop();
});

/** Reads SSE events from `url` into `into` (until the server ends the stream). */
async function sse(url: string, into: string[]): Promise<void> {
  const res = await waitForValue(async () => {
    const r = await fetch(url).catch(() => undefined);
    return r?.status === 200 ? r : undefined;
  }, `the SSE endpoint at ${url}`, 5000, 10);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  void (async () => {
    let buf = "";
    for await (const c of res.body as ReadableStream<Uint8Array>) {
      buf += new TextDecoder().decode(c);
      let k;
      while ((k = buf.indexOf("\n\n")) >= 0) {
        const ev = buf.slice(0, k);
        buf = buf.slice(k + 2);
        if (ev.startsWith("data: ")) into.push(ev.slice(6));
      }
    }
  })().catch(() => {});
}

test("httppush in, sse out: the rule's results reach every SSE client", async () => {
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM inbox () WITH (TYPE="httppush", DATASOURCE="/inbox", FORMAT="json")' })).status).toBe(201);
  const r = await d.call("POST", "/rules", { id: "push2sse", sql: "SELECT v * 2 AS v FROM inbox", actions: [{ sse: { endpoint: "/feed", sendSingle: true } }] });
  expect(r.status).toBe(201);
  const a: string[] = [];
  const b: string[] = [];
  await sse(`http://127.0.0.1:${port}/feed`, a);
  await sse(`http://127.0.0.1:${port}/feed`, b);
  for (const v of [1, 2]) {
    const res = await fetch(`http://127.0.0.1:${port}/inbox`, { method: "POST", body: JSON.stringify({ v }), headers: { Origin: "http://example.com" } });
    expect([res.status, await res.text(), res.headers.get("access-control-allow-origin")]).toEqual([200, "ok", "*"]);
  }
  await waitFor(() => a.length === 2 && b.length === 2, "2 events each");
  expect(a).toEqual(['{"v":2}', '{"v":4}']);
  expect(b).toEqual(a);
  const st = JSON.parse((await d.call("GET", "/rules/push2sse/status")).text) as Record<string, unknown>;
  expect(st.source_inbox_0_connection_status).toBe(1);
  expect(st.sink_sse_0_0_connection_status).toBe(1);
  expect((await fetch(`http://127.0.0.1:${port}/nowhere`)).status).toBe(404);
});

test("a trial run's SSE shares the data server; its reply names the port", async () => {
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM demo () WITH (TYPE="memory", DATASOURCE="demo")' })).status).toBe(201);
  const r = await d.call("POST", "/ruletest", { id: "t1", sql: "SELECT a FROM demo", mockSource: { demo: { data: [{ a: 1 }], interval: 10, loop: false } } });
  expect(JSON.parse(r.text)).toEqual({ id: "t1", port });
  const got: string[] = [];
  await sse(`http://127.0.0.1:${port}/test/t1`, got);
  expect((await d.call("POST", "/ruletest/t1/start")).status).toBe(200);
  await waitFor(() => got.length === 1, "the trial's event");
  expect(got).toEqual(['[{"a":1}]']);
  await d.call("DELETE", "/ruletest/t1");
});
