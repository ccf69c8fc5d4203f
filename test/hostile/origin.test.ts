/**
 * The request-origin policy against a real daemon, for EVERY route of the live table (surface.ts):
 * pages of foreign origins (a `text/plain` POST needing no preflight, `Origin: null`, a cross-site
 * load without Origin, a preflight) and DNS-rebinding requests (a foreign `Host`) are refused with
 * eKuiper's error body on every route not marked open, and nothing changes; open routes answer
 * anyone with `*`; clients without Origin (curl, the kuiper verbs, eKuiper Manager's server-side
 * proxy) and the server's own pages keep working; the data server's websocket endpoints follow
 * the same policy; the allow-lists open it up.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "../helpers/runtime.ts";
import { concrete, endsDaemon, freePort, rawHttp, REFUSAL, SECRET, seed, snapshot, startFloe, surface, upgradeRequest, upgradeStatus, VICTIM, type DaemonProc, type SurfaceRoute } from "./surface.ts";

const EVIL = "https://evil.example";
const ROUTES = surface();
const WS = `/${VICTIM}ws`;

let d: DaemonProc;
let port: number;
let dataPort: number;
let before: Record<string, string>;

beforeAll(async () => {
  // /metrics shares the REST port, so its routes are in the table too.
  port = freePort();
  dataPort = freePort();
  d = await startFloe(undefined, { KUIPER__BASIC__RESTPORT: String(port), KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: String(port), KUIPER__SOURCE__HTTPSERVERPORT: String(dataPort) });
  await seed(d);
  const ws = await d.call("POST", "/rules", { id: `${VICTIM}ws`, sql: `SELECT * FROM ${VICTIM}`, actions: [{ websocket: { path: WS } }] });
  expect(ws.status).toBe(201);
  before = await snapshot(d);
});

afterAll(async () => {
  await d?.stop();
});

interface Sent {
  readonly method: string;
  readonly status: number;
  readonly text: string;
  readonly allow: string | null;
}

/** One request; a body (the attack's payload, `text/plain` so a page needs no preflight) on methods that carry one. */
async function send(method: string, path: string, headers: Record<string, string>, target = port): Promise<Sent> {
  const withBody = method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
  const body = withBody ? JSON.stringify({ id: "pwn", name: "pwn", sql: 'CREATE STREAM pwn () WITH (TYPE="memory", DATASOURCE="pwn")', content: "pwn" }) : undefined;
  const res = await fetch(`http://127.0.0.1:${target}${path}`, { method, body, headers: withBody ? { "Content-Type": "text/plain", ...headers } : headers, signal: AbortSignal.timeout(5000) });
  // An event stream (`/ui/events`) does not end: its head is the answer.
  const stream = res.headers.get("Content-Type") === "text/event-stream";
  if (stream) await res.body?.cancel();
  return { method, status: res.status, text: stream ? "" : await res.text(), allow: res.headers.get("Access-Control-Allow-Origin") };
}

/** The policy's refusal (a HEAD answer carries no body). */
const refused = (r: Sent): boolean => r.status === 403 && (r.method === "HEAD" || REFUSAL.test(r.text)) && r.allow === null;

interface Attack {
  readonly name: string;
  readonly headers: (r: SurfaceRoute) => Record<string, string>;
  readonly method?: "OPTIONS";
  /** A foreign Host is refused on every route, open ones too. */
  readonly rebinding?: boolean;
}

const ATTACKS: Attack[] = [
  { name: "a page of a foreign origin (Origin: https://evil.example; text/plain, no preflight)", headers: () => ({ Origin: EVIL }) },
  { name: "a sandboxed frame or file: page (Origin: null)", headers: () => ({ Origin: "null" }) },
  { name: "a cross-site load that sends no Origin (an <img>, a link: Sec-Fetch-Site: cross-site)", headers: () => ({ "Sec-Fetch-Site": "cross-site" }) },
  { name: "a preflight from a foreign origin", method: "OPTIONS", headers: (r) => ({ Origin: EVIL, "Access-Control-Request-Method": r.method, "Access-Control-Request-Headers": "content-type" }) },
  { name: "DNS rebinding (Host: evil.example, no Origin)", rebinding: true, headers: () => ({ Host: `evil.example:${port}` }) },
  { name: "DNS rebinding with the page's own Origin (Host: attacker.127.0.0.1.nip.io)", rebinding: true, headers: () => ({ Host: `attacker.127.0.0.1.nip.io:${port}`, Origin: `http://attacker.127.0.0.1.nip.io:${port}` }) },
];

describe("every route of the table, attacked", () => {
  test("the walk sees the whole surface: REST, /metrics on the REST port, the console", () => {
    const keys = new Set(ROUTES.map((r) => `${r.method} ${r.path}`));
    for (const k of ["POST /streams", "POST /rules", "GET /v2/data/export", "POST /stop", "GET /metrics", "GET /ui", "GET /ui/events"]) expect(keys).toContain(k);
    expect(ROUTES.length).toBeGreaterThan(150);
    // Open routes are few, and none of them serves definitions, exports or secrets.
    expect(ROUTES.filter((r) => r.open).map((r) => `${r.method} ${r.path}`)).toEqual(["GET /", "POST /", "GET /ping", "GET /ui", "HEAD /ui", "GET /ui/", "HEAD /ui/", "GET /ui/app.js", "HEAD /ui/app.js"]);
  });

  test.each(ATTACKS.map((a) => [a.name, a] as const))("%s: refused with eKuiper's body on every route not marked open", async (_name, a) => {
    const wrong: string[] = [];
    for (const r of ROUTES) {
      const got = await send(a.method ?? r.method, concrete(r.path), a.headers(r));
      const guarded = !r.open || a.rebinding === true;
      // An open route is answered; one asked with an Origin allows any (`*`).
      const ok = guarded ? refused(got) : got.status !== 403 && got.allow === (a.headers(r).Origin ? "*" : null);
      if (!ok) wrong.push(`${a.method ?? r.method} ${r.path}: ${got.status} ${got.allow} ${got.text.slice(0, 120)}`);
    }
    expect(wrong).toEqual([]);
  });

  test("after every attack nothing changed: definitions, secrets, rule states, UDFs, schemas, uploads, the trial run", async () => {
    expect(await snapshot(d)).toEqual(before);
    expect((await d.call("GET", "/streams/pwn")).status).toBe(400);
    expect((await d.call("POST", `/ruletest/${VICTIM}/start`)).status).toBe(200);
    expect(d.proc.exitCode).toBeNull();
  });
});

describe("finding 2: a web page drove the API", () => {
  test("a cross-origin text/plain POST creates no stream and no rule with a file sink where the page chose", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "floe-pwn-")), "written-by-a-page.txt");
    const stream = await send("POST", "/streams", { Origin: EVIL });
    const rule = await send("POST", "/rules", { Origin: EVIL });
    const ruleBody = JSON.stringify({ id: "pwn", sql: `SELECT * FROM ${VICTIM}`, actions: [{ file: { path: out } }] });
    const direct = await fetch(`${d.base}/rules`, { method: "POST", body: ruleBody, headers: { "Content-Type": "text/plain", Origin: EVIL } });
    expect([stream.status, rule.status, direct.status]).toEqual([403, 403, 403]);
    expect(await direct.text()).toMatch(REFUSAL);
    expect(JSON.parse((await d.call("GET", "/streams")).text)).not.toContain("pwn");
    expect((await d.call("GET", "/rules/pwn")).status).toBe(404);
    expect(existsSync(out)).toBe(false);
  });

  test("GET /v2/data/export from a foreign origin: 403, no Access-Control-Allow-Origin, no password", async () => {
    for (const path of ["/v2/data/export", "/data/export"]) {
      const r = await send("GET", path, { Origin: EVIL });
      expect(refused(r)).toBe(true);
      expect(r.text).not.toContain(SECRET);
    }
    // The secret is there for a client without Origin (the export is for migration).
    expect((await d.call("GET", "/v2/data/export")).text).toContain(SECRET);
  });

  test("a foreign Host is refused even when the page is same-origin to it (DNS rebinding)", async () => {
    const host = `evil.example:${port}`;
    for (const [method, path] of [["POST", "/streams"], ["GET", "/v2/data/export"], ["GET", "/rules"], ["GET", "/stop"]] as const) {
      const r = await send(method, path, { Host: host, Origin: `http://${host}` });
      expect([path, refused(r)]).toEqual([path, true]);
      expect(r.text).toContain('host \\"evil.example:');
    }
    expect(d.proc.exitCode).toBeNull();
  });
});

describe("who keeps working", () => {
  test("clients without Origin: every GET route answers as before, under each loopback spelling of Host", async () => {
    const wrong: string[] = [];
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST.:${port}`]) {
      for (const r of ROUTES.filter((x) => (x.method === "GET" || x.method === "HEAD") && !endsDaemon(x))) {
        const got = await send(r.method, concrete(r.path), { Host: host });
        if (REFUSAL.test(got.text)) wrong.push(`${host} ${r.method} ${r.path}: ${got.text}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("the server's own pages (the console): a same-origin POST creates, and is answered with its origin", async () => {
    const created = await fetch(`${d.base}/streams`, { method: "POST", body: JSON.stringify({ sql: 'CREATE STREAM own () WITH (TYPE="memory", DATASOURCE="own")' }), headers: { Origin: d.base, "Content-Type": "application/json" } });
    expect([created.status, created.headers.get("Access-Control-Allow-Origin"), created.headers.get("Vary")]).toEqual([201, d.base, "Origin"]);
    const same = await fetch(`${d.base}/streams/own`, { method: "DELETE", headers: { Origin: `http://localhost:${port}`, Host: `localhost:${port}` } });
    expect(same.status).toBe(200);
  });

  test("the CLI port follows the same policy: no Origin works, a foreign page is refused", async () => {
    expect((await send("GET", "/streams", {}, d.cliPort)).status).toBe(200);
    expect(refused(await send("POST", "/streams", { Origin: EVIL }, d.cliPort))).toBe(true);
    expect(refused(await send("GET", "/streams", { Host: `evil.example:${d.cliPort}` }, d.cliPort))).toBe(true);
  });

  test("every /ui response forbids framing and sniffing, with the right content type", async () => {
    const routes = [...ROUTES.filter((r) => r.path.startsWith("/ui") && r.method !== "HEAD"), { method: "GET", path: "/ui/nothing" }];
    for (const { method, path } of routes) {
      const ctl = new AbortController();
      const res = await fetch(d.base + path, { method, body: method === "POST" ? '{"sql":""}' : undefined, signal: ctl.signal });
      const h = res.headers;
      expect([path, h.get("X-Frame-Options"), h.get("X-Content-Type-Options")]).toEqual([path, "DENY", "nosniff"]);
      expect(h.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
      const type = path === "/ui/app.js" ? "text/javascript; charset=utf-8" : path === "/ui/events" ? "text/event-stream" : path === "/ui/nothing" ? "text/plain; charset=utf-8" : path.startsWith("/ui/api/") ? (res.ok ? "application/json" : "text/plain; charset=utf-8") : "text/html; charset=utf-8";
      expect([path, h.get("Content-Type")]).toEqual([path, type]);
      ctl.abort();
    }
  });
});

describe("the data server's websocket endpoints", () => {
  const own = () => `127.0.0.1:${dataPort}`;

  test("a client without Origin connects (eKuiper's clients, scripts)", async () => {
    await waitFor(async () => (await upgradeStatus(dataPort, WS, own())) === 101, "the websocket sink's endpoint");
  });

  test("a page of a foreign origin, Origin: null and a rebinding Host are refused with eKuiper's body", async () => {
    for (const [host, headers] of [[own(), { Origin: EVIL }], [own(), { Origin: "null" }], [`evil.example:${dataPort}`, {}], [`evil.example:${dataPort}`, { Origin: `http://evil.example:${dataPort}` }]] as const) {
      const r = await rawHttp(dataPort, upgradeRequest(WS, host, headers));
      expect([host, headers, r.status]).toEqual([host, headers, 403]);
      expect(r.body).toMatch(REFUSAL);
    }
  });

  test("the data server's own origin connects", async () => {
    expect(await upgradeStatus(dataPort, WS, own(), { Origin: `http://${own()}` })).toBe(101);
  });
});

describe("the allow-lists open it up (basic.allowedOrigins, basic.allowedHosts)", () => {
  let o: DaemonProc;
  let oData: number;
  const DASH = "https://dash.example";

  beforeAll(async () => {
    oData = freePort();
    o = await startFloe(undefined, { KUIPER__BASIC__ALLOWEDORIGINS: `${DASH}, https://other.example:8443`, KUIPER__BASIC__ALLOWEDHOSTS: "floe.internal", KUIPER__SOURCE__HTTPSERVERPORT: String(oData) });
  });
  afterAll(async () => {
    await o?.stop();
  });

  test("a listed origin may call guarded routes and is answered with its own name", async () => {
    const pre = await send("OPTIONS", "/streams", { Origin: DASH, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" }, o.restPort);
    expect([pre.status, pre.allow]).toEqual([200, DASH]);
    const created = await send("POST", "/streams", { Origin: DASH }, o.restPort);
    expect([created.status, created.allow]).toEqual([201, DASH]);
    expect(refused(await send("GET", "/v2/data/export", { Origin: EVIL }, o.restPort))).toBe(true);
    expect(refused(await send("GET", "/v2/data/export", { Origin: "https://dash.example:444" }, o.restPort))).toBe(true);
  });

  test("a listed host name is accepted; others still are not", async () => {
    expect((await send("GET", "/streams", { Host: `floe.internal:${o.restPort}` }, o.restPort)).status).toBe(200);
    expect((await send("GET", "/streams", { Host: `FLOE.Internal:${o.restPort}`, Origin: `http://floe.internal:${o.restPort}` }, o.restPort)).status).toBe(200);
    expect(refused(await send("GET", "/streams", { Host: `evil.floe.internal:${o.restPort}` }, o.restPort))).toBe(true);
  });

  test("a listed origin opens a websocket endpoint", async () => {
    expect((await o.call("POST", "/streams", { sql: 'CREATE STREAM w () WITH (TYPE="websocket", DATASOURCE="/in")' })).status).toBe(201);
    expect((await o.call("POST", "/rules", { id: "w", sql: "SELECT * FROM w", actions: [{ nop: {} }] })).status).toBe(201);
    await waitFor(async () => (await upgradeStatus(oData, "/in", `127.0.0.1:${oData}`, { Origin: DASH })) === 101, "a listed origin's websocket");
    expect(await upgradeStatus(oData, "/in", `127.0.0.1:${oData}`, { Origin: EVIL })).toBe(403);
  });
});
