/**
 * The httppull lookup (rules-and-sinks.md §11.3, last paragraph) against a real local HTTP
 * server: each lookup renders the key values into url and body, the response rows are the result;
 * the private-network guard applies at open and to every lookup (a key may render the host).
 */
import { afterAll, expect, test } from "bun:test";
import { createLookupSource } from "../../../lib/connectors/lookups.ts";
import { createRuntimeEnv } from "../../../lib/runtime/env.ts";
import { createNetGuard } from "../../../lib/net/guard.ts";

const bodies: string[] = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    bodies.push(await req.text());
    const id = url.pathname.split("/").at(-1);
    if (id === "none") return Response.json([]);
    return Response.json([{ id: Number(id), name: `device-${id}`, region: url.searchParams.get("region") }]);
  },
});
afterAll(() => server.stop(true));
const base = `http://127.0.0.1:${server.port}`;

test("each lookup sends the request with the key values as template fields in url and body", async () => {
  const env = createRuntimeEnv({ outbound: createNetGuard({ allowPrivate: true }) });
  const src = createLookupSource(
    "httppull",
    { url: base, datasource: "/devices/{{.id}}?region={{.region}}", method: "post", body: '{"id":{{.id}}}', headers: { Accept: "application/json" } },
    env,
  );
  await src.open();
  expect(await src.lookup(["id", "region"], [7n, "eu"])).toEqual([{ id: 7n, name: "device-7", region: "eu" }]);
  expect(await src.lookup(["id", "region"], ["none", "eu"])).toEqual([]);
  expect(bodies[0]).toBe('{"id":7}');
  await src.close();
});

test("a loopback target is refused at open without basic.enablePrivateNet", async () => {
  const src = createLookupSource("httppull", { url: base }, createRuntimeEnv());
  await expect(Promise.resolve(src.open())).rejects.toThrow("ip 127.0.0.1 is in internal network");
});

test("a lookup key rendered into the host is checked per lookup: loopback in any spelling is refused", async () => {
  const env = createRuntimeEnv({ outbound: createNetGuard({ resolve: async (h) => (h === "api.example" ? ["127.0.0.1"] : []) }) });
  const src = createLookupSource("httppull", { url: `http://{{.host}}:${server.port}/devices/1` }, env);
  await src.open();
  const before = bodies.length;
  for (const host of ["[::ffff:127.0.0.1]", "2130706433", "0x7f.1", "api.example", "[::1]"]) {
    await expect(Promise.resolve(src.lookup(["host"], [host]))).rejects.toThrow(/^ip (127\.0\.0\.1|::1) is in internal network$/);
  }
  expect(bodies.length).toBe(before);
  await src.close();
});
