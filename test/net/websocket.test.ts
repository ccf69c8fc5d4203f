/**
 * Websocket clients through the guard (lib/net/websocket.ts): the name is resolved once and
 * checked, the socket opens to the checked address with the URL's name as Host header and TLS
 * server name, and a name resolving to loopback is refused. As in test/net/guard.test.ts, a
 * "public" address is carried by the injected transport to a loopback server.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createNetGuard, type Resolver } from "../../lib/net/guard.ts";
import { openWebSocket } from "../../lib/net/websocket.ts";

const TLS_DIR = join(import.meta.dir, "..", "..", "fixtures", "tls");
const cert = readFileSync(join(TLS_DIR, "guard-test.crt"), "utf8");
const key = readFileSync(join(TLS_DIR, "guard-test.key"), "utf8");

const handler = {
  fetch(req: Request, server: Bun.Server<string>): Response | undefined {
    return server.upgrade(req, { data: req.headers.get("host") ?? "" }) ? undefined : new Response("no", { status: 400 });
  },
  websocket: { open: (ws: Bun.ServerWebSocket<string>) => void ws.send(ws.data), message() {} },
};
const plain = Bun.serve({ hostname: "127.0.0.1", port: 0, ...handler });
const secure = Bun.serve({ hostname: "127.0.0.1", port: 0, tls: { cert, key }, ...handler });
afterAll(() => {
  plain.stop(true);
  secure.stop(true);
});

const PUBLIC = "93.184.216.34";
const names: Resolver = async (h) => (h === "loop.example" ? ["127.0.0.1"] : [PUBLIC]);
const asked: { url: string; init: Bun.WebSocketOptions }[] = [];
const guard = () =>
  createNetGuard({
    resolve: names,
    webSocket: (url, init) => {
      asked.push({ url, init });
      // wss to the fixture needs its CA; the server name stays the one the guard set.
      const tls = url.startsWith("wss:") ? { ...init.tls, ca: cert } : init.tls;
      return new WebSocket(url.replace(PUBLIC, "127.0.0.1"), { ...init, tls });
    },
  });

function firstFrame(ws: WebSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    ws.onmessage = (e) => {
      resolve(String(e.data));
      ws.close();
    };
    ws.onerror = (e) => reject(new Error((e as ErrorEvent).message));
  });
}

test("the socket opens to the checked address; the Host header stays the URL's name", async () => {
  asked.length = 0;
  const ws = await openWebSocket(`ws://api.example:${plain.port}/feed`, { headers: { "X-Token": "t" } }, guard());
  expect(await firstFrame(ws)).toBe(`api.example:${plain.port}`);
  expect(asked.map((a) => a.url)).toEqual([`ws://${PUBLIC}:${plain.port}/feed`]);
  expect(asked[0]!.init.headers).toEqual({ "X-Token": "t", host: `api.example:${plain.port}` });
});

test("wss: the TLS server name is the URL's name, so the certificate is checked against it", async () => {
  const ok = await openWebSocket(`wss://guard.test:${secure.port}/feed`, { headers: {} }, guard());
  expect(await firstFrame(ok)).toBe(`guard.test:${secure.port}`);
  const wrong = await openWebSocket(`wss://imposter.example:${secure.port}/feed`, { headers: {} }, guard());
  await expect(firstFrame(wrong)).rejects.toThrow(/altnames|does not match/i);
});

test("a name resolving to loopback is refused before any socket is opened", async () => {
  asked.length = 0;
  await expect(openWebSocket(`ws://loop.example:${plain.port}/feed`, { headers: {} }, guard())).rejects.toThrow(new Error("ip 127.0.0.1 is in internal network"));
  await expect(openWebSocket(`http://api.example/feed`, { headers: {} }, guard())).rejects.toThrow('unsupported protocol scheme "http"');
  expect(asked).toEqual([]);
});
