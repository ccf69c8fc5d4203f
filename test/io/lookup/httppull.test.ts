/**
 * The httppull lookup (rules-and-sinks.md §11.3, last paragraph) against a real local HTTP
 * server: each lookup renders the key values into url and body, the response rows are the result;
 * the private-network guard applies at open.
 */
import { afterAll, expect, test } from "bun:test";
import { createLookupSource } from "../../../lib/io/lookup/index.ts";
import { createRuntimeEnv } from "../../../lib/runtime/env.ts";

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
  const env = createRuntimeEnv({ enablePrivateNet: true });
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
