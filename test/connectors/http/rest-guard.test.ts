/**
 * The REST sink goes through the private-network guard like httppull: loopback/private targets,
 * in any spelling, behind a name, or rendered per row from a url template, are refused with
 * `ip <ip> is in internal network` and nothing is sent; `basic.enablePrivateNet` lets them through.
 */
import { afterEach, expect, test } from "bun:test";
import type { Obj } from "../../../lib/value/values.ts";
import { createNetGuard, systemResolve, type Resolver } from "../../../lib/net/guard.ts";
import { HttpCollector } from "../../helpers/http.ts";
import { metric, streams, testRuntime, waitFor, type TestRuntime } from "../../helpers/runtime.ts";

const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="guard/in")`);
let open: HttpCollector[] = [];
afterEach(() => {
  for (const h of open) h.down();
  open = [];
});

async function collector(): Promise<HttpCollector> {
  const h = await HttpCollector.create();
  h.up();
  open.push(h);
  return h;
}

async function publish(t: TestRuntime, rows: Obj[]): Promise<void> {
  for (const r of rows) await t.env.pubsub.publish("guard/in", r);
}

/** A public-looking name that resolves to loopback; other names through getaddrinfo. */
const toLoopback: Resolver = async (host) => (host === "api.example" ? ["127.0.0.1"] : systemResolve(host));

test.each([
  ["http://127.0.0.1:PORT/", "127.0.0.1"],
  ["http://localhost:PORT/", "127.0.0.1"],
  ["http://[::ffff:127.0.0.1]:PORT/", "127.0.0.1"],
  ["http://[0:0:0:0:0:ffff:7f00:1]:PORT/", "127.0.0.1"],
  ["http://2130706433:PORT/", "127.0.0.1"],
  ["http://0x7f.1:PORT/", "127.0.0.1"],
  ["http://api.example:PORT/", "127.0.0.1"],
])("by default the REST sink refuses %s: ip %s is in internal network, nothing is sent", async (url, ip) => {
  const http = await collector();
  const t = testRuntime({ outbound: createNetGuard({ resolve: toLoopback }) });
  const target = url.replace("PORT", String(http.port));
  const rule = await t.rule({ id: "g", sql: "SELECT n FROM s", actions: [{ rest: { url: target, method: "post", sendSingle: true } }] }, defs).start();
  await publish(t, [{ n: 1 }, { n: 2 }]);
  await waitFor(() => metric(rule, "sink_rest_0_0_exceptions_total") === 2, "two refusals");
  expect(String(metric(rule, "sink_rest_0_0_last_exception"))).toBe(`rest sink fails to send out the data:err=ip ${ip} is in internal network recoverAble=false method=POST path="${target}"`);
  expect(metric(rule, "sink_rest_0_0_records_out_total")).toBe(0);
  expect(http.raw).toEqual([]);
  await rule.stop();
});

test("a url template rendered per row is checked per request", async () => {
  const http = await collector();
  const t = testRuntime({ outbound: createNetGuard({ resolve: toLoopback }) });
  const rule = await t.rule({ id: "tpl", sql: "SELECT n, h FROM s", actions: [{ rest: { url: `http://{{.h}}:${http.port}/`, method: "post", sendSingle: true } }] }, defs).start();
  await publish(t, [
    { n: 1, h: "[::ffff:7f00:1]" },
    { n: 2, h: "2130706433" },
    { n: 3, h: "api.example" },
  ]);
  await waitFor(() => metric(rule, "sink_rest_0_0_exceptions_total") === 3, "three refusals");
  expect(String(metric(rule, "sink_rest_0_0_last_exception"))).toStartWith("rest sink fails to send out the data:err=ip 127.0.0.1 is in internal network recoverAble=false");
  expect(http.raw).toEqual([]);
  await rule.stop();
});

test("with basic.enablePrivateNet the same targets receive the rows", async () => {
  const http = await collector();
  const t = testRuntime({ outbound: createNetGuard({ allowPrivate: true }) });
  const rule = await t.rule({ id: "ok", sql: "SELECT n FROM s", actions: [{ rest: { url: `http://[::ffff:127.0.0.1]:${http.port}/`, method: "post", sendSingle: true } }] }, defs).start();
  await publish(t, [{ n: 1 }, { n: 2 }]);
  await waitFor(() => http.raw.length === 2, "two rows");
  expect(http.bodies).toEqual([1, 2]);
  await rule.stop();
});
