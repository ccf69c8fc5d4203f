/**
 * The private-network guard (lib/net/guard.ts): every spelling of a private address is refused
 * with `ip <ip> is in internal network`, a name is resolved once and the connection goes to the
 * address that was checked, and every redirect hop is checked again.
 *
 * There is no public internet here, so "public" hosts are a small in-process route table: the
 * injected resolver gives names TEST-NET/documentation-range public addresses, and the injected
 * fetch carries a connection to such an address to the real loopback server behind it, recording
 * what the guard asked to connect to. Private targets are real loopback servers reached (or not)
 * by Bun's own fetch.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatIp, parseIp } from "../../lib/net/address.ts";
import { checkUrl, createNetGuard, guardedFetch, type FetchFn, type Resolver } from "../../lib/net/guard.ts";

/** A self-signed test-only certificate for `guard.test` (EC P-256, valid to 2126; `openssl req -x509`). */
const TLS_DIR = join(import.meta.dir, "..", "..", "fixtures", "tls");
const cert = readFileSync(join(TLS_DIR, "guard-test.crt"), "utf8");
const key = readFileSync(join(TLS_DIR, "guard-test.key"), "utf8");

/** Public addresses of the fake internet; each leads to the loopback server on the URL's port. */
const ROUTED = new Set(["93.184.216.34", "93.184.216.35", "2606:2800:220:1:248:1893:25c8:1946"]);
/** A public address whose host is down (connections to it are refused). */
const DOWN = "93.184.216.99";
const NAMES: Record<string, string[]> = {
  "multi.example": [DOWN, "93.184.216.35"],
  "down.example": [DOWN],
  "api.example": ["93.184.216.34"],
  "other.example": ["93.184.216.35"],
  "v6.example": ["2606:2800:220:1:248:1893:25c8:1946"],
  "guard.test": ["93.184.216.34"],
  "loopback.example": ["127.0.0.1"],
  "mixed.example": ["93.184.216.34", "::1"],
  "mapped.example": ["::ffff:10.1.2.3"],
  "meta.example": ["169.254.169.254"],
};
const resolveFake: Resolver = async (host) => {
  const a = NAMES[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return a;
};

interface Connect {
  url: string;
  host: string | null;
  serverName: string | undefined;
}
const connects: Connect[] = [];
const routedFetch: FetchFn = (url, init) => {
  const u = new URL(url);
  const h = u.hostname.replace(/^\[|\]$/g, "");
  connects.push({ url, host: new Headers(init.headers).get("host"), serverName: init.tls?.serverName });
  const a = formatIp(parseIp(h)!);
  if (ROUTED.has(a)) u.hostname = "127.0.0.1";
  else if (a === DOWN) u.hostname = "127.0.0.2"; // nothing listens there: a real refused connection
  return fetch(u.href, init);
};
const guarded = (resolve: Resolver = resolveFake) => createNetGuard({ allowPrivate: false, resolve, fetch: routedFetch });

let secretHits = 0;
let secret: ReturnType<typeof Bun.serve>;
let api: ReturnType<typeof Bun.serve>;
let tlsApi: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  secret = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (secretHits++, new Response("secret")) });
  api = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const u = new URL(req.url);
      if (u.pathname === "/redirect") return new Response(null, { status: Number(u.searchParams.get("code") ?? 302), headers: { Location: u.searchParams.get("to")! } });
      const hop = /^\/hop\/(\d+)$/.exec(u.pathname);
      if (hop) return Number(hop[1]) === 0 ? Response.json({ done: true }) : new Response(null, { status: 302, headers: { Location: `/hop/${Number(hop[1]) - 1}` } });
      return Response.json({ method: req.method, host: req.headers.get("host"), body: await req.text(), auth: req.headers.get("authorization"), ct: req.headers.get("content-type"), path: u.pathname });
    },
  });
  tlsApi = Bun.serve({ port: 0, hostname: "127.0.0.1", tls: { cert, key }, fetch: (req) => Response.json({ host: req.headers.get("host") }) });
});

afterAll(() => {
  secret.stop(true);
  api.stop(true);
  tlsApi.stop(true);
});

// ---------------------------------------------------------------------------------------------
// URL spellings: the URL parser normalises them, the guard refuses every one. No DNS is asked.

const noDns: Resolver = async (h) => {
  throw new Error(`unexpected DNS lookup of ${h}`);
};

test.each([
  ["http://[::ffff:127.0.0.1]:8080/", "127.0.0.1"],
  ["http://[::ffff:7f00:1]/", "127.0.0.1"],
  ["http://[0:0:0:0:0:ffff:7f00:1]/", "127.0.0.1"],
  ["https://[::ffff:169.254.169.254]/latest/meta-data", "169.254.169.254"],
  ["http://[::]/", "::"],
  ["http://[::1]:9081/rules", "::1"],
  ["http://[0::1]/", "::1"],
  ["http://[fc00::1]/", "fc00::1"],
  ["http://[FD00::1]/", "fd00::1"],
  ["http://[fe80::1]/", "fe80::1"],
  ["http://[::127.0.0.1]/", "::7f00:1"],
  ["http://[64:ff9b::10.0.0.1]/", "64:ff9b::a00:1"],
  ["http://[2002:7f00:1::]/", "2002:7f00:1::"],
  ["http://2130706433/", "127.0.0.1"],
  ["http://0x7f000001/", "127.0.0.1"],
  ["http://0177.0.0.1/", "127.0.0.1"],
  ["http://017700000001/", "127.0.0.1"],
  ["http://127.1/", "127.0.0.1"],
  ["http://127.0.1/", "127.0.0.1"],
  ["http://0x7f.1/", "127.0.0.1"],
  ["http://127.0.0.1./", "127.0.0.1"],
  ["http://%31%32%37.0.0.1/", "127.0.0.1"],
  ["http://127。0。0。1/", "127.0.0.1"],
  ["http://0/", "0.0.0.0"],
  ["http://0.0.0.0:9081/", "0.0.0.0"],
  ["http://10.1.2.3/", "10.1.2.3"],
  ["http://172.20.0.1/", "172.20.0.1"],
  ["http://192.168.0.1/", "192.168.0.1"],
  ["http://169.254.169.254/", "169.254.169.254"],
  ["http://100.100.100.200/", "100.100.100.200"],
])("%s is refused: ip %s is in internal network", async (url, ip) => {
  const guard = createNetGuard({ resolve: noDns, fetch: routedFetch });
  await expect(checkUrl(url, guard)).rejects.toThrow(new Error(`ip ${ip} is in internal network`));
  await expect(guardedFetch(url, {}, guard)).rejects.toThrow(`ip ${ip} is in internal network`);
});

test.each(["http://8.8.8.8/", "http://[2001:4860:4860::8888]/", "http://[::ffff:8.8.8.8]/", "http://134744072/", "http://172.32.0.1/", "http://100.128.0.1/"])("%s passes the check", async (url) => {
  await checkUrl(url, createNetGuard({ resolve: noDns }));
});

// ---------------------------------------------------------------------------------------------
// Names: resolved once, every address checked, the checked one connected to.

test("a public-looking name that resolves to loopback is refused, and nothing connects", async () => {
  const n = connects.length;
  await expect(guardedFetch(`http://loopback.example:${secret.port}/`, {}, guarded())).rejects.toThrow(new Error("ip 127.0.0.1 is in internal network"));
  expect(connects.length).toBe(n);
  expect(secretHits).toBe(0);
});

test("every resolved address is checked: one private among public ones refuses the name", async () => {
  await expect(guardedFetch(`http://mixed.example:${api.port}/`, {}, guarded())).rejects.toThrow(new Error("ip ::1 is in internal network"));
  await expect(guardedFetch(`http://mapped.example:${api.port}/`, {}, guarded())).rejects.toThrow(new Error("ip 10.1.2.3 is in internal network"));
  await expect(checkUrl(`http://meta.example/`, guarded())).rejects.toThrow(new Error("ip 169.254.169.254 is in internal network"));
});

test("DNS rebinding: the name is resolved once and the connection goes to the address that was checked", async () => {
  let calls = 0;
  const rebinding: Resolver = async () => (++calls === 1 ? ["93.184.216.34"] : ["127.0.0.1"]);
  const before = connects.length;
  const res = await guardedFetch(`http://rebind.example:${api.port}/ok`, {}, guarded(rebinding));
  expect(res.status).toBe(200);
  expect(calls).toBe(1);
  const c = connects.slice(before);
  expect(c.map((x) => new URL(x.url).hostname)).toEqual(["93.184.216.34"]);
  expect(c[0]!.host).toBe(`rebind.example:${api.port}`);
  // The next connection resolves again, and the new answer is checked before anything is opened.
  await expect(guardedFetch(`http://rebind.example:${api.port}/ok`, {}, guarded(rebinding))).rejects.toThrow(new Error("ip 127.0.0.1 is in internal network"));
  expect(connects.length).toBe(before + 1);
  expect(secretHits).toBe(0);
});

test("one guard reuses a name's checked addresses for RESOLVE_TTL_MS: no new lookup, the same address connected to", async () => {
  let calls = 0;
  const g = guarded(async () => (++calls, ["93.184.216.35"]));
  const before = connects.length;
  await checkUrl(`http://other.example:${api.port}/`, g);
  for (let i = 0; i < 3; i++) expect((await guardedFetch(`http://other.example:${api.port}/`, {}, g)).status).toBe(200);
  expect(calls).toBe(1);
  expect(connects.slice(before).map((c) => new URL(c.url).hostname)).toEqual(["93.184.216.35", "93.184.216.35", "93.184.216.35"]);
});

test("a refused connection to one checked address falls through to the next; never to an unchecked one", async () => {
  const before = connects.length;
  const res = await guardedFetch(`http://multi.example:${api.port}/m`, {}, guarded());
  expect(await res.json()).toMatchObject({ host: `multi.example:${api.port}`, path: "/m" });
  expect(connects.slice(before).map((c) => new URL(c.url).hostname)).toEqual([DOWN, "93.184.216.35"]);
  await expect(guardedFetch(`http://down.example:${api.port}/`, {}, guarded())).rejects.toThrow(/ECONNREFUSED|ConnectionRefused/);
});

test("the pinned request keeps the URL's Host header (or the configured one) and reaches an IPv6 address", async () => {
  const res = await guardedFetch(`http://api.example:${api.port}/p?q=1`, {}, guarded());
  expect(await res.json()).toMatchObject({ host: `api.example:${api.port}`, path: "/p" });
  const configured = await guardedFetch(`http://api.example:${api.port}/p`, { headers: { Host: "vhost.example" } }, guarded());
  expect(await configured.json()).toMatchObject({ host: "vhost.example" });
  const before = connects.length;
  const r6 = await guardedFetch(`http://v6.example:${api.port}/`, {}, guarded());
  expect(r6.status).toBe(200);
  expect(new URL(connects[before]!.url).hostname).toBe("[2606:2800:220:1:248:1893:25c8:1946]");
});

test("HTTPS to a pinned address: SNI and certificate verification use the URL's name", async () => {
  const before = connects.length;
  const res = await guardedFetch(`https://guard.test:${tlsApi.port}/`, { tls: { ca: cert } }, guarded());
  expect(await res.json()).toEqual({ host: `guard.test:${tlsApi.port}` });
  expect(connects[before]!.serverName).toBe("guard.test");
  expect(new URL(connects[before]!.url).hostname).toBe("93.184.216.34");
  // The certificate names guard.test only: a request for another name on the same address fails verification.
  NAMES["imposter.example"] = ["93.184.216.34"];
  await expect(guardedFetch(`https://imposter.example:${tlsApi.port}/`, { tls: { ca: cert } }, guarded())).rejects.toThrow(/ERR_TLS_CERT_ALTNAME_INVALID|altname|does not match/i);
});

// ---------------------------------------------------------------------------------------------
// Redirects: followed here, each hop checked.

const via = (to: string, code = 302) => `http://api.example:${api.port}/redirect?code=${code}&to=${encodeURIComponent(to)}`;

test.each([
  [`http://127.0.0.1:SECRET/`, "127.0.0.1"],
  [`http://[::ffff:127.0.0.1]:SECRET/`, "127.0.0.1"],
  [`http://2130706433:SECRET/`, "127.0.0.1"],
  [`http://loopback.example:SECRET/`, "127.0.0.1"],
  [`http://169.254.169.254/latest/meta-data/`, "169.254.169.254"],
])("a redirect from an allowed server to %s is refused", async (to, ip) => {
  for (const code of [301, 302, 303, 307, 308]) {
    await expect(guardedFetch(via(to.replace("SECRET", String(secret.port)), code), {}, guarded())).rejects.toThrow(new Error(`ip ${ip} is in internal network`));
  }
  expect(secretHits).toBe(0);
});

test("a redirect to a non-http scheme is refused with Go's text", async () => {
  await expect(guardedFetch(via("file:///etc/passwd"), {}, guarded())).rejects.toThrow(new Error('unsupported protocol scheme "file"'));
});

test("redirect semantics as fetch: 307/308 keep method and body, 303 and POST after 301/302 become a body-less GET", async () => {
  const post = { method: "POST", body: '{"a":1}', headers: { "Content-Type": "application/json" } };
  const target = `http://other.example:${api.port}/t`;
  for (const [code, method, body] of [
    [307, "POST", '{"a":1}'],
    [308, "POST", '{"a":1}'],
    [303, "GET", ""],
    [302, "GET", ""],
    [301, "GET", ""],
  ] as const) {
    const got = (await (await guardedFetch(via(target, code), post, guarded())).json()) as Record<string, unknown>;
    expect({ code, method: got.method, body: got.body, host: got.host }).toEqual({ code, method, body, host: `other.example:${api.port}` });
    if (method === "GET") expect(got.ct).toBeNull();
  }
  const put = (await (await guardedFetch(via(target, 302), { method: "PUT", body: "x" }, guarded())).json()) as Record<string, unknown>;
  expect([put.method, put.body]).toEqual(["PUT", "x"]);
});

test("credentials stay on the origin: Authorization is dropped on a cross-origin hop, kept on a same-origin one", async () => {
  const init = { headers: { Authorization: "Bearer t" } };
  const same = (await (await guardedFetch(via(`/same`), init, guarded())).json()) as Record<string, unknown>;
  expect(same.auth).toBe("Bearer t");
  const cross = (await (await guardedFetch(via(`http://other.example:${api.port}/x`), init, guarded())).json()) as Record<string, unknown>;
  expect(cross.auth).toBeNull();
});

test("redirects are bounded as Go's client bounds them: 9 followed, the 10th stops", async () => {
  const ok = await guardedFetch(`http://api.example:${api.port}/hop/9`, {}, guarded());
  expect(await ok.json()).toEqual({ done: true });
  await expect(guardedFetch(`http://api.example:${api.port}/hop/10`, {}, guarded())).rejects.toThrow(new Error("stopped after 10 redirects"));
});

test("redirect: manual returns the 3xx without following it", async () => {
  const res = await guardedFetch(via(`http://127.0.0.1:${secret.port}/`), { redirect: "manual" }, guarded());
  expect(res.status).toBe(302);
  expect(secretHits).toBe(0);
});

// ---------------------------------------------------------------------------------------------
// basic.enablePrivateNet

test("with enablePrivateNet loopback targets and redirects to them work as plain fetch", async () => {
  const open = createNetGuard({ allowPrivate: true, resolve: noDns });
  await checkUrl(`http://[::ffff:127.0.0.1]:${secret.port}/`, open);
  const direct = await guardedFetch(`http://[::ffff:127.0.0.1]:${secret.port}/`, {}, open);
  expect(await direct.text()).toBe("secret");
  const redirected = await guardedFetch(`http://127.0.0.1:${api.port}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${secret.port}/`)}`, {}, open);
  expect(await redirected.text()).toBe("secret");
  secretHits = 0;
});
