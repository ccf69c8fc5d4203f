/**
 * The OTLP exporter goes through the outbound client. It used to call fetch directly: `POST /tracer
 * {"action":"start","collector_url":"127.0.0.1:…/x?"}` made floe POST every traced rule's spans,
 * with the rows they saw, to that address every second. Now a loopback collector is refused
 * unless `basic.enablePrivateNet` — at `POST /tracer` with a 400 and an eKuiper-shaped body, and
 * for a collector in kuiper.yaml at every export — and with the setting the same collector works.
 * Both daemons run the same traced rule at the same time, so the open one's exports bound the wait.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

/** POSTs received, by the first path segment (which daemon and which collector setting). */
const posts: Record<string, number> = {};
const collector = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const who = new URL(req.url).pathname.split("/")[1]!;
    await req.text();
    if (req.method === "POST") posts[who] = (posts[who] ?? 0) + 1;
    return Response.json({});
  },
});

const yaml = (who: string) =>
  ["openTelemetry:", "  enableRemoteCollector: true", `  remoteEndpoint: 127.0.0.1:${collector.port}/config-${who}`, "  enableLocalStorage: true", ""].join("\n");

let guarded: DaemonProc;
let open: DaemonProc;

async function tracedRule(d: DaemonProc): Promise<void> {
  expect((await d.call("PUT", "/metadata/sources/simulator/confKeys/tick", { data: [{ secret: "row data" }], interval: 50, loop: true })).status).toBe(200);
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM tick () WITH (TYPE="simulator", CONF_KEY="tick")' })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "r", sql: "SELECT secret FROM tick", actions: [{ nop: {} }] })).status).toBe(201);
  await waitFor(async () => (await d.call("POST", "/rules/r/trace/start", { strategy: "always" })).status === 200, "tracing on");
}

beforeAll(async () => {
  [guarded, open] = await Promise.all([startFloe(tempHome({ "kuiper.yaml": yaml("guarded") })), startFloe(tempHome({ "kuiper.yaml": yaml("open") }), { KUIPER__BASIC__ENABLEPRIVATENET: "true" })]);
  await Promise.all([tracedRule(guarded), tracedRule(open)]);
}, 30_000);

afterAll(async () => {
  await Promise.all([guarded?.stop(), open?.stop()]);
  collector.stop(true);
});

test("a loopback collector in kuiper.yaml is refused at every export and said in the log; with enablePrivateNet it receives", async () => {
  await waitFor(() => (posts["config-open"] ?? 0) >= 2, "the open daemon's exports");
  expect(posts["config-guarded"]).toBeUndefined();
  const url = `http://127.0.0.1:${collector.port}/config-guarded/v1/traces`;
  await waitFor(() => guarded.stderr().includes(`trace export to ${url} refused: ip 127.0.0.1 is in internal network`), "the refusal in the log");
  await waitFor(() => guarded.stderr().includes(`trace export to ${url} failed (`), "a failed export in the log");
});

test("POST /tracer with a loopback collector_url is a 400 and nothing is sent there; with enablePrivateNet it works", async () => {
  const at = (who: string) => `127.0.0.1:${collector.port}/${who}/x?`;
  for (const [url, ip] of [
    [at("guarded"), "127.0.0.1"],
    [`http://[::ffff:127.0.0.1]:${collector.port}/guarded`, "127.0.0.1"],
    [`2130706433:${collector.port}/guarded`, "127.0.0.1"],
    [`[::1]:${collector.port}/guarded`, "::1"],
  ]) {
    const r = await guarded.call("POST", "/tracer", { action: "start", collector_url: url, service_name: "pwn" });
    expect([r.status, r.text]).toEqual([400, `{"error":1000,"message":"collector_url ${url}: ip ${ip} is in internal network"}\n`]);
  }
  expect(await open.call("POST", "/tracer", { action: "start", collector_url: at("open"), service_name: "ok" })).toMatchObject({ status: 200, text: "success" });
  await waitFor(() => (posts.open ?? 0) >= 2, "the open daemon's exports to the new collector");
  expect(posts.guarded).toBeUndefined();
  // A stop needs no collector check; an invalid collector is a 400 too.
  expect(await guarded.call("POST", "/tracer", { action: "stop", collector_url: at("guarded") })).toMatchObject({ status: 200, text: "success" });
  expect((await guarded.call("POST", "/tracer", { action: "start", collector_url: "http://[nope" })).status).toBe(400);
});
