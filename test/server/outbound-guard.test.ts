/**
 * The private-network guard in a real daemon (`basic.enablePrivateNet` false by default): `file`
 * URLs of `/config/uploads`, `/ruleset/import` and `/data/import`, in any spelling of a loopback
 * address, are refused with `ip <ip> is in internal network`; a rule's REST sink cannot reach the
 * daemon's own REST API (it once created a UDF that way). With the switch on, the same URLs work.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitFor } from "../helpers/wait.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

let hits = 0;
const files: ReturnType<typeof Bun.serve> = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req): Response {
    hits++;
    const u = new URL(req.url);
    if (u.pathname === "/moved") return new Response(null, { status: 302, headers: { Location: `http://127.0.0.1:${files.port}/f.txt` } });
    if (u.pathname === "/ruleset.json") return Response.json({ streams: { gs: 'CREATE STREAM gs () WITH (TYPE="memory", DATASOURCE="gs")' } });
    return new Response("hello");
  },
});

let guarded: DaemonProc;
let open: DaemonProc;

beforeAll(async () => {
  [guarded, open] = await Promise.all([startFloe(), startFloe(tempHome(), { KUIPER__BASIC__ENABLEPRIVATENET: "true" })]);
});

afterAll(async () => {
  await Promise.all([guarded?.stop(), open?.stop()]);
  files.stop(true);
});

const spellings = (path: string) => [
  [`http://127.0.0.1:${files.port}${path}`, "127.0.0.1"],
  [`http://[::ffff:127.0.0.1]:${files.port}${path}`, "127.0.0.1"],
  [`http://[0:0:0:0:0:ffff:7f00:1]:${files.port}${path}`, "127.0.0.1"],
  [`http://2130706433:${files.port}${path}`, "127.0.0.1"],
  [`http://0x7f.1:${files.port}${path}`, "127.0.0.1"],
  [`http://[::1]:${files.port}${path}`, "::1"],
  [`http://localhost:${files.port}${path}`, "127.0.0.1"],
];

const message = (text: string) => (JSON.parse(text) as { message: string }).message;

test("uploads by URL refuse every spelling of loopback", async () => {
  for (const [url, ip] of spellings("/f.txt")) {
    const r = await guarded.call("POST", "/config/uploads", { name: "f.txt", file: url }, { "Content-Type": "application/json" });
    expect([r.status, message(r.text)]).toEqual([400, `Upload error: getFile has error: ip ${ip} is in internal network`]);
  }
  expect(hits).toBe(0);
});

test("ruleset and data imports by URL refuse every spelling of loopback", async () => {
  for (const [url, ip] of spellings("/ruleset.json")) {
    const rs = await guarded.call("POST", "/ruleset/import", { file: url });
    expect([rs.status, message(rs.text)]).toEqual([400, `Fail to read file: ip ${ip} is in internal network`]);
    const data = await guarded.call("POST", "/data/import", { file: url });
    expect([data.status, message(data.text)]).toEqual([400, `Fail to read file: ip ${ip} is in internal network`]);
  }
  expect(hits).toBe(0);
});

test("a rule's REST sink cannot reach the daemon's own API: the request is refused, no UDF is created", async () => {
  expect((await guarded.call("PUT", "/metadata/sources/simulator/confKeys/tick", { data: [{ a: 1 }], interval: 50, loop: true })).status).toBe(200);
  expect((await guarded.call("POST", "/streams", { sql: 'CREATE STREAM tick () WITH (TYPE="simulator", CONF_KEY="tick")' })).status).toBe(201);
  const target = `http://[::ffff:127.0.0.1]:${guarded.restPort}/udf/javascript`;
  const rule = {
    id: "pwn",
    sql: "SELECT a FROM tick",
    actions: [{ rest: { url: target, method: "post", sendSingle: true, dataTemplate: '{"id":"pwn","script":"function pwn(){ return 1; }"}' } }],
  };
  expect((await guarded.call("POST", "/rules", rule)).status).toBe(201);
  let status: Record<string, unknown> = {};
  await waitFor(async () => {
    status = JSON.parse((await guarded.call("GET", "/rules/pwn/status")).text) as Record<string, unknown>;
    return (status.sink_rest_0_0_exceptions_total as number) > 0;
  }, () => `a refusal (status ${JSON.stringify(status)})`, 10_000, 50);
  expect(status.sink_rest_0_0_last_exception).toBe(`rest sink fails to send out the data:err=ip 127.0.0.1 is in internal network recoverAble=false method=POST path="${target}"`);
  expect(status.sink_rest_0_0_records_out_total).toBe(0);
  expect(JSON.parse((await guarded.call("GET", "/udf/javascript")).text)).toEqual([]);
  await guarded.call("DELETE", "/rules/pwn");
});

test("with basic.enablePrivateNet the same URLs are downloaded, redirects included", async () => {
  const r = await open.call("POST", "/config/uploads", { name: "f.txt", file: `http://[::ffff:127.0.0.1]:${files.port}/moved` }, { "Content-Type": "application/json" });
  expect(r.status).toBe(201);
  expect(await Bun.file(`${open.dir}/data/uploads/f.txt`).text()).toBe("hello");
  const rs = await open.call("POST", "/ruleset/import", { file: `http://2130706433:${files.port}/ruleset.json` });
  expect(rs.status).toBe(200);
  expect(JSON.parse((await open.call("GET", "/streams")).text)).toEqual(["gs"]);
});
