/**
 * Hostile bodies against every route that can carry one (surface.ts walks the live table, so a
 * route added later is attacked too): oversize with a Content-Length, oversize and chunked as a
 * multipart upload, nested far past the depth limit, and invalid UTF-8 inside otherwise valid
 * requests. Each gets a 4xx — or, from a route that ignores bodies, the answer it gives without
 * one — never a 5xx or a hang, and `/ping` answers after every one.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { concrete, endsDaemon, freePort, startFloe, surface, type DaemonProc } from "./surface.ts";

const LIMIT = 64 * 1024;
const ROUTES = surface().filter((r) => r.method !== "GET" && r.method !== "HEAD" && !endsDaemon(r));

let d: DaemonProc;
/** Each route's status for the same request without a body. */
const bare = new Map<string, number>();

const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

async function send(method: string, path: string, body: NonNullable<RequestInit["body"]> | undefined, headers: Record<string, string> = {}): Promise<number | string> {
  try {
    const res = await fetch(d.base + path, { method, body, headers, signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.status;
  } catch (e) {
    return `no answer: ${(e as Error).message}`;
  }
}

beforeAll(async () => {
  // /metrics shares the REST port, so every route of the surface is served.
  const port = freePort();
  d = await startFloe(undefined, { KUIPER__BASIC__MAXBODYSIZE: String(LIMIT), KUIPER__BASIC__RESTPORT: String(port), KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: String(port) });
  for (const r of ROUTES) {
    const s = await send(r.method, concrete(r.path), undefined);
    bare.set(key(r), typeof s === "number" ? s : 0);
  }
});

afterAll(async () => {
  await d?.stop();
});

const enc = new TextEncoder();
const CREATE = 'CREATE STREAM hostile () WITH (TYPE=\\"memory\\", DATASOURCE=\\"hostile\\")';
/** A request body most routes would accept, with `extra` spliced into its fields. */
const plausible = (extra: string) => `{"id":"hostile","name":"hostile","sql":"${CREATE}","content":"x","script":"function hostile() { return 1; }","tags":["hostile"]${extra}}`;

function multipartStream(size: number): ReadableStream<Uint8Array> {
  const head = enc.encode('--B\r\nContent-Disposition: form-data; name="uploadFile"; filename="big.txt"\r\n\r\n');
  const chunk = new Uint8Array(16 * 1024).fill(0x61);
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent === 0) c.enqueue(head);
      if (sent >= size) {
        c.enqueue(enc.encode("\r\n--B--\r\n"));
        c.close();
        return;
      }
      c.enqueue(chunk);
      sent += chunk.length;
    },
  });
}

interface Hostile {
  readonly name: string;
  readonly body: () => NonNullable<RequestInit["body"]>;
  readonly headers: Record<string, string>;
  /** The only acceptable answer, when the body must be refused whatever the route. */
  readonly status?: number;
}

const HOSTILE: Hostile[] = [
  { name: "oversize with a Content-Length (limit + 1 KiB)", body: () => plausible(`,"pad":"${"a".repeat(LIMIT + 1024)}"`), headers: { "Content-Type": "application/json" }, status: 413 },
  { name: "oversize and chunked, as a multipart upload (4 x the limit)", body: () => multipartStream(4 * LIMIT), headers: { "Content-Type": "multipart/form-data; boundary=B" }, status: 413 },
  { name: "arrays nested 20,000 deep", body: () => plausible(`,"deep":${"[".repeat(20_000)}${"]".repeat(20_000)}`), headers: { "Content-Type": "application/json" } },
  { name: "objects nested 5,000 deep", body: () => plausible(`,"deep":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`), headers: { "Content-Type": "application/json" } },
  { name: "a whole body nested 20,000 deep", body: () => "[".repeat(20_000) + "]".repeat(20_000), headers: { "Content-Type": "application/json" } },
  {
    name: "invalid UTF-8 inside otherwise valid JSON",
    body: () => {
      const [a, b] = plausible(`,"password":"XX"`).split("XX");
      return Buffer.concat([enc.encode(a), new Uint8Array([0xff, 0xfe, 0xc3]), enc.encode(b)]);
    },
    headers: { "Content-Type": "application/json" },
  },
];

test("the walk covers every route that can take a body", () => {
  const keys = ROUTES.map(key);
  for (const k of ["POST /streams", "POST /rules", "POST /config/uploads", "PUT /schemas/{type}/{name}/upload", "POST /batch/req", "POST /data/import", "PATCH /configs"]) expect(keys).toContain(k);
  expect(ROUTES.length).toBeGreaterThan(70);
});

test.each(HOSTILE.map((h) => [h.name, h] as const))("%s: a 4xx (or the bodiless answer) on every route, never a 5xx or a hang; /ping answers after each", async (_name, h) => {
  const wrong: string[] = [];
  for (const r of ROUTES) {
    const got = await send(r.method, concrete(r.path), h.body(), h.headers);
    const without = bare.get(key(r))!;
    const ok = typeof got === "number" && (h.status !== undefined ? got === h.status : (got >= 400 && got < 500) || got === without);
    if (!ok) wrong.push(`${key(r)}: ${got} (without a body: ${without})`);
    const ping = await send("GET", "/ping", undefined);
    if (ping !== 200) wrong.push(`GET /ping after ${key(r)}: ${ping}`);
  }
  expect(wrong).toEqual([]);
  // Nothing hostile was stored.
  expect(JSON.parse((await d.call("GET", "/streams")).text)).toEqual([]);
});
