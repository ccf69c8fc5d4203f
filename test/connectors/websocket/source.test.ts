/**
 * WebSocket (rules-and-sinks.md §11.6) through real rules: the source and the sink as server
 * endpoints on the data server (real clients connect), and as clients (with `addr`, `requestHeader`)
 * of a real Bun websocket server of the test.
 */
import { afterEach, expect, test } from "bun:test";
import type { ServerWebSocket } from "bun";
import { collect, dataRuntime } from "../../helpers/data-server.ts";
import { streams, waitFor, waitForValue, type TestRuntime } from "../../helpers/runtime.ts";
import type { RunHandle } from "../../../lib/runtime/rule.ts";

const open: { t: TestRuntime; rules: RunHandle[] }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    for (const r of o.rules) await r.stop();
    o.t.env.dataServer.close();
  }
});

const extra = (props: Record<string, unknown>): string => JSON.stringify(JSON.stringify(props));

/** Connects to the data server's endpoint, retrying while the endpoint is not there yet. */
async function connect(t: TestRuntime, path: string, onFrame: (s: string) => void): Promise<WebSocket> {
  return waitForValue(() => {
    const ws = new WebSocket(`ws://127.0.0.1:${t.env.dataServer.port}${path}`);
    ws.onmessage = (ev: MessageEvent) => onFrame(String(ev.data));
    return new Promise<WebSocket | undefined>((r) => {
      ws.onopen = () => r(ws);
      ws.onerror = () => r(undefined);
    });
  }, `a websocket connection to ${path}`, 3000, 10);
}

test("server mode: the source takes every frame any client sends, text or binary", async () => {
  const t = dataRuntime();
  const got = collect(t, "ws/out1");
  const rule = await t.rule({ id: "ws1", sql: "SELECT a FROM s", actions: [{ memory: { topic: "ws/out1", sendSingle: true } }] }, streams(`CREATE STREAM s () WITH (TYPE="websocket", DATASOURCE="/ws/in")`)).start();
  open.push({ t, rules: [rule] });
  const c1 = await connect(t, "/ws/in", () => {});
  const c2 = await connect(t, "/ws/in", () => {});
  c1.send('{"a":1}');
  c2.send(new TextEncoder().encode('{"a":2}'));
  await waitFor(() => got.length === 2, "2 rows");
  expect(got.sort()).toEqual(['{"a":1}', '{"a":2}']);
  expect(rule.metrics().source_s_0_connection_status).toBe(1);
  c1.close();
  c2.close();
});

test("server mode: the sink broadcasts each payload to every connected client", async () => {
  const t = dataRuntime();
  const defs = streams(`CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="ws/src")`);
  const rule = await t.rule({ id: "ws2", sql: "SELECT n FROM m", actions: [{ websocket: { path: "/ws/feed", sendSingle: true } }] }, defs).start();
  open.push({ t, rules: [rule] });
  const g1: string[] = [];
  const g2: string[] = [];
  const c1 = await connect(t, "/ws/feed", (s) => g1.push(s));
  const c2 = await connect(t, "/ws/feed", (s) => g2.push(s));
  await waitFor(() => rule.metrics().sink_websocket_0_0_connection_status === 1, "sink open");
  for (let n = 0; n < 3; n++) await t.env.pubsub.publish("ws/src", { n: BigInt(n) });
  await waitFor(() => g1.length === 3 && g2.length === 3, "3 frames each");
  expect(g1).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
  expect(g2).toEqual(g1);
  c1.close();
  c2.close();
});

test("a source and a sink on one server path share the endpoint", async () => {
  const t = dataRuntime();
  const defs = streams(`CREATE STREAM s () WITH (TYPE="websocket", DATASOURCE="/echo")`);
  const rule = await t.rule({ id: "ws3", sql: "SELECT upper(w) AS w FROM s", actions: [{ websocket: { path: "/echo", sendSingle: true } }] }, defs).start();
  open.push({ t, rules: [rule] });
  const got: string[] = [];
  const c = await connect(t, "/echo", (s) => got.push(s));
  c.send('{"w":"hi"}');
  await waitFor(() => got.length === 1, "the echo");
  expect(got).toEqual(['{"w":"HI"}']);
  c.close();
});

test("client mode: the source and the sink connect to addr with requestHeader", async () => {
  const headers: string[] = [];
  const clients = new Set<ServerWebSocket<{ path: string }>>();
  const received: string[] = [];
  const server = Bun.serve<{ path: string }>({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req, srv) {
      headers.push(`${new URL(req.url).pathname} ${req.headers.get("x-token")}`);
      return srv.upgrade(req, { data: { path: new URL(req.url).pathname } }) ? undefined : new Response("no", { status: 400 });
    },
    websocket: {
      open: (ws) => void clients.add(ws),
      message: (_ws, m) => void received.push(String(m)),
      close: (ws) => void clients.delete(ws),
    },
  });
  try {
    const t = dataRuntime();
    const addr = `127.0.0.1:${server.port}`;
    const defs = streams(`CREATE STREAM s () WITH (TYPE="websocket", DATASOURCE="/feed", EXTRA=${extra({ addr, scheme: "ws", requestHeader: { "X-Token": "abc" } })})`);
    const rule = await t.rule({ id: "ws4", sql: "SELECT a * 10 AS a FROM s", actions: [{ websocket: { addr, path: "/results", requestHeader: { "X-Token": "def" }, sendSingle: true } }] }, defs).start();
    open.push({ t, rules: [rule] });
    await waitFor(() => clients.size === 2, "source and sink connected");
    expect(headers.sort()).toEqual(["/feed abc", "/results def"]);
    await waitFor(() => rule.metrics().source_s_0_connection_status === 1 && rule.metrics().sink_websocket_0_0_connection_status === 1, "connected status");
    for (const c of clients) if (c.data.path === "/feed") c.send('{"a":4}');
    await waitFor(() => received.length === 1, "a result at the server");
    expect(received).toEqual(['{"a":40}']);
    // The server going away is reported on the nodes; they reconnect when it is back.
    for (const c of [...clients]) c.close(1011, "bye");
    await waitFor(() => rule.metrics().source_s_0_connection_status !== 1, "disconnected");
    await waitFor(() => clients.size === 2, "reconnected");
  } finally {
    server.stop(true);
  }
}, 20_000);

test("property errors", () => {
  const t = dataRuntime();
  const mk = (a: Record<string, unknown>) => () => t.rule({ id: "e", sql: "SELECT * FROM s", actions: [a] }, streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="x")`));
  expect(mk({ websocket: { path: "feed" } })).toThrow("websocket endpoint should start with /");
  expect(mk({ websocket: {} })).toThrow("websocket endpoint should start with /");
  expect(mk({ websocket: { path: "/a", addr: "h:1", scheme: "http" } })).toThrow("websocket scheme http is not supported, must be ws or wss");
});

test("a source path not starting with / is refused at start", async () => {
  const t = dataRuntime();
  const rule = t.rule({ id: "e2", sql: "SELECT * FROM s", actions: [{ nop: {} }] }, streams(`CREATE STREAM s () WITH (TYPE="websocket", DATASOURCE="feed")`));
  await expect(rule.start()).rejects.toThrow("websocket endpoint should start with /");
});
