/**
 * The httppull source (rules-and-sinks.md §11.3) against a real local HTTP server: pull at start
 * then every interval, url + DATASOURCE, method/body/bodyType/headers, pagination states,
 * incremental, responseType body, OAuth access and refresh, compression, eKuiper's error texts,
 * the private-network guard (every spelling, names, templated hosts), and backpressure (no new pull while the bus refuses).
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Obj } from "../../../lib/value/values.ts";
import { HttpPullSource } from "../../../lib/connectors/http/pull-source.ts";
import { floeRun, openOn, rowsOf, text } from "../../helpers/source.ts";
import { waitFor } from "../../helpers/runtime.ts";
import { createNetGuard } from "../../../lib/net/guard.ts";

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

const seen: Seen[] = [];
let routes: Record<string, (req: Request, url: URL) => Response | Promise<Response>> = {};
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    seen.push({ method: req.method, path: url.pathname + url.search, headers: Object.fromEntries(req.headers), body: await req.text() });
    const h = routes[url.pathname];
    return h ? h(req, url) : new Response("not found", { status: 404 });
  },
});
afterAll(() => server.stop(true));

const base = `http://127.0.0.1:${server.port}`;
const env = { baseDir: process.cwd(), outbound: createNetGuard({ allowPrivate: true }) };

function reset(r: typeof routes): void {
  seen.length = 0;
  routes = r;
}

const json = (v: unknown, init?: ResponseInit) => new Response(JSON.stringify(v), init);

test("`floe run`: the stream pulls url + DATASOURCE at start; basic.enablePrivateNet lets it reach 127.0.0.1", async () => {
  reset({ "/api/data": () => json([{ t: 1 }, { t: 2 }]) });
  const dir = mkdtempSync(join(tmpdir(), "floe-httppull-"));
  writeFileSync(join(dir, "r.sql"), `CREATE STREAM h () WITH (TYPE="httppull", DATASOURCE="/api/data", EXTRA="{\\"url\\":\\"${base}\\",\\"method\\":\\"get\\",\\"interval\\":0}");\nSELECT t * 10 AS t FROM h`);
  const p = floeRun([join(dir, "r.sql")], dir, { KUIPER__BASIC__ENABLEPRIVATENET: "true" });
  await waitFor(() => seen.length === 1, "the first pull");
  // A fixed wait, to show that interval 0 pulls only once.
  await Bun.sleep(300);
  p.kill("SIGINT");
  const [out, err, code] = await Promise.all([text(p.stdout), text(p.stderr), p.exited]);
  expect(err).toBe("");
  expect(code).toBe(0);
  expect(out).toBe('{"t":10}\n{"t":20}\n');
  // interval 0: pulled once.
  expect(seen.length).toBe(1);
  expect(seen[0]!.method).toBe("GET");
}, 20_000);

test("without basic.enablePrivateNet a loopback target is refused: `ip <ip> is in internal network`", async () => {
  reset({});
  const dir = mkdtempSync(join(tmpdir(), "floe-httppull-"));
  writeFileSync(join(dir, "r.sql"), `CREATE STREAM h () WITH (TYPE="httppull", EXTRA="{\\"url\\":\\"${base}/x\\"}");\nSELECT * FROM h`);
  const p = floeRun([join(dir, "r.sql")], dir);
  const [out, err, code] = await Promise.all([text(p.stdout), text(p.stderr), p.exited]);
  expect(out).toBe("");
  expect(err).toBe("floe: ip 127.0.0.1 is in internal network\n");
  expect(code).toBe(1);
  expect(seen.length).toBe(0);
  // In-process too, and for a host name resolving to loopback.
  await expect(openOn(new HttpPullSource({ url: `http://localhost:${server.port}` }, { baseDir: ".", outbound: createNetGuard() }))).rejects.toThrow(/^ip (127\.0\.0\.1|::1) is in internal network$/);
}, 20_000);

test.each([
  ["http://[::ffff:127.0.0.1]:PORT/x", "127.0.0.1"],
  ["http://[::ffff:7f00:1]:PORT/x", "127.0.0.1"],
  ["http://[::1]:PORT/x", "::1"],
  ["http://2130706433:PORT/x", "127.0.0.1"],
  ["http://0x7f000001:PORT/x", "127.0.0.1"],
  ["http://0177.0.0.1:PORT/x", "127.0.0.1"],
  ["http://127.1:PORT/x", "127.0.0.1"],
  ["http://api.example:PORT/x", "127.0.0.1"],
])("every spelling of a loopback target is refused at open: %s → ip %s is in internal network", async (url, ip) => {
  reset({});
  // A public-looking name that resolves to loopback (an injected resolver, not real DNS).
  const resolveHost = async (h: string) => (h === "api.example" ? ["127.0.0.1"] : []);
  const src = new HttpPullSource({ url: url.replace("PORT", String(server.port)) }, { baseDir: ".", outbound: createNetGuard({ resolve: resolveHost }) });
  await expect(openOn(src)).rejects.toThrow(new Error(`ip ${ip} is in internal network`));
  expect(seen.length).toBe(0);
});

test("a url whose host is a state template is checked at each pull, not only at open", async () => {
  reset({ "/x": () => json({ a: 1 }) });
  const src = new HttpPullSource({ url: `http://{{.host}}:${server.port}/x`, states: { host: "2130706433" }, interval: 0 }, { baseDir: ".", outbound: createNetGuard() });
  const p = await openOn(src);
  await waitFor(() => p.exceptions.length > 0, "the refusal");
  await src.close();
  expect(p.exceptions).toEqual(["ip 127.0.0.1 is in internal network"]);
  expect(seen.length).toBe(0);
});

test.each([
  [{ method: "fetch" }, "Not supported HTTP method fetch."],
  [{ bodyType: "yaml" }, "Invalid body type value yaml."],
  [{ responseType: "text" }, "Invalid response type value text."],
  [{ timeout: -1 }, "timeout must be greater than or equal to 0"],
  [{ oauth: { refresh: { url: "http://x" } } }, "if setting oAuth, `access` property is required"],
  [{ url: "ftp://host/x" }, "Invalid url ftp://host/x, only http and https are supported"],
])("invalid props %j fail with eKuiper's text", (props, err) => {
  expect(() => new HttpPullSource({ url: base, ...props }, env)).toThrow(err);
});

test("pagination: states are url template fields, updated from each response", async () => {
  reset({
    "/page": (_r, u) => {
      const page = Number(u.searchParams.get("page"));
      return json({ page: page + 1, size: 2, items: [page] });
    },
  });
  const src = new HttpPullSource({ url: base, datasource: "/page?page={{.page}}&size={{.size}}", interval: "30ms", states: { page: 1, size: 2 } }, env);
  const p = await openOn(src);
  const got: Obj[] = [];
  await waitFor(() => (got.push(...rowsOf(p.take())), got.length >= 3), "three pages");
  await src.close();
  expect(seen.slice(0, 3).map((s) => s.path)).toEqual(["/page?page=1&size=2", "/page?page=2&size=2", "/page?page=3&size=2"]);
  expect(got[0]).toEqual({ page: 2n, size: 2n, items: [1n] });
});

test("POST with body, bodyType, headers; incremental skips an unchanged body", async () => {
  let v = 1;
  reset({ "/inc": () => json({ v }) });
  const src = new HttpPullSource(
    { url: `${base}/inc`, method: "post", body: '{"q":"{{.k}}"}', bodyType: "json", headers: { "X-Key": "k-{{.k}}" }, states: { k: "s" }, interval: "25ms", incremental: true },
    env,
  );
  const p = await openOn(src);
  await waitFor(() => seen.length >= 4, "four pulls");
  v = 2;
  const n = seen.length;
  await waitFor(() => seen.length >= n + 2, "two more pulls");
  await src.close();
  expect(rowsOf(p.take())).toEqual([{ v: 1n }, { v: 2n }]);
  expect(seen[0]!.method).toBe("POST");
  expect(seen[0]!.body).toBe('{"q":"s"}');
  expect(seen[0]!.headers["content-type"]).toBe("application/json");
  expect(seen[0]!.headers["x-key"]).toBe("k-s");
});

test("response errors are source exceptions with eKuiper's texts; the source keeps pulling", async () => {
  reset({
    "/code": (_r, u) => json({ code: Number(u.searchParams.get("c")), v: 1 }),
    "/bad": () => new Response("not json"),
    "/scalar": () => new Response("[1,2]"),
  });
  const run = async (props: Record<string, unknown>) => {
    const src = new HttpPullSource({ url: base, interval: 0, ...props }, env);
    const p = await openOn(src);
    await waitFor(() => p.exceptions.length > 0 || p.sub.length > 0, "an answer");
    await src.close();
    return { rows: rowsOf(p.take()), errors: p.exceptions };
  };
  expect(await run({ datasource: "/missing" })).toEqual({ rows: [], errors: ["response code error: 404"] });
  expect((await run({ datasource: "/bad" })).errors[0]).toStartWith("response body error: decode fail for ");
  expect((await run({ datasource: "/scalar" })).errors[0]).toStartWith("response body error: decode fail for ");
  expect(await run({ datasource: "/code?c=200", responseType: "body" })).toEqual({ rows: [{ code: 200n, v: 1n }], errors: [] });
  expect(await run({ datasource: "/code?c=503", responseType: "body" })).toEqual({ rows: [], errors: ["response code error: 503"] });
});

test("a request past `timeout` is an exception", async () => {
  // The server answers late on purpose: time is the subject.
  reset({ "/slow": async () => (await Bun.sleep(300), json({})) });
  const src = new HttpPullSource({ url: `${base}/slow`, timeout: "50ms" }, env);
  const p = await openOn(src);
  await waitFor(() => p.exceptions.length > 0, "the timeout");
  await src.close();
  expect(p.exceptions[0]).toContain("GET " + base + "/slow");
});

test("compression: the response body is decompressed with the configured algorithm", async () => {
  reset({ "/gz": () => new Response(gzipSync(Buffer.from('{"z":1}')), { headers: { "Content-Encoding": "gzip" } }) });
  const src = new HttpPullSource({ url: `${base}/gz`, compression: "gzip" }, env);
  const p = await openOn(src);
  await waitFor(() => p.sub.length > 0 || p.exceptions.length > 0, "the row");
  await src.close();
  expect(p.exceptions).toEqual([]);
  expect(rowsOf(p.take())).toEqual([{ z: 1n }]);
  expect(seen[0]!.headers["accept-encoding"]).toBe("gzip");
});

test("OAuth: access at connect, token fields in header templates, refresh after half of expire", async () => {
  let n = 0;
  reset({
    "/token": () => json({ access_token: `a${++n}`, refresh_token: "r" }),
    "/refresh": () => json({ access_token: `refreshed-with-${seen.at(-1)!.body}` }),
    "/data": () => json({ ok: true }),
  });
  const src = new HttpPullSource(
    {
      url: `${base}/data`,
      interval: "40ms",
      headers: { Authorization: "Bearer {{.access_token}}" },
      oauth: { access: { url: `${base}/token`, body: '{"id":"me"}', expire: "0.2" }, refresh: { url: `${base}/refresh`, body: "{{.refresh_token}}" } },
    },
    env,
  );
  try {
    const p = await openOn(src);
    await waitFor(() => seen.some((s) => s.path === "/refresh") && seen.filter((s) => s.path === "/data").length >= 5, "a refresh");
    expect(p.exceptions).toEqual([]);
  } finally {
    await src.close();
  }
  const auth = seen.filter((s) => s.path === "/data").map((s) => s.headers.authorization);
  expect(seen[0]!.path).toBe("/token");
  expect(seen[0]!.method).toBe("POST");
  expect(seen[0]!.body).toBe('{"id":"me"}');
  expect(auth[0]).toBe("Bearer a1");
  expect(auth.at(-1)).toBe("Bearer refreshed-with-r");
});

test("backpressure: no new pull starts while the bus refuses the last response", async () => {
  reset({ "/bp": () => json({ x: 1 }) });
  const src = new HttpPullSource({ url: `${base}/bp`, interval: "10ms" }, env);
  const p = await openOn(src, 1);
  await waitFor(() => p.bus.refusals > 0, "a refusal");
  // A fixed wait over several intervals, to show that no pull starts while the bus refuses.
  await Bun.sleep(120);
  // The first response is queued, the second waits for room: nothing else was requested.
  expect(seen.filter((s) => s.path === "/bp").length).toBe(2);
  p.take();
  await waitFor(() => seen.filter((s) => s.path === "/bp").length > 2, "pulling again");
  await src.close();
});
