/**
 * JavaScript UDFs under a live daemon: a UDF that hangs per call is a counted row error on the rule
 * while REST keeps answering; a script that loops at load is refused; after kill -9 and a restart
 * on the same data dir the daemon serves again, the rule's calls error and are counted again, and
 * a stored script that hangs at load (written by an older floe) no longer blocks the start.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { Kv } from "../../lib/store/kv.ts";
import { freePort } from "../helpers/data-server.ts";
import { waitForValue } from "../helpers/wait.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

const dir = tempHome();
const port = freePort();
const env = { KUIPER__SOURCE__HTTPSERVERPORT: String(port), KUIPER__BASIC__UDFTIMEOUT: "50ms" };
let d: DaemonProc | undefined;
afterAll(async () => {
  await d?.stop("SIGKILL");
});

/** The value `probe` finds, polled over REST every 10 ms for up to 15 s. */
const until = <T>(probe: () => Promise<T | undefined>, what: string): Promise<T> => waitForValue(probe, what, 15_000, 10);

async function status(p: DaemonProc, rule: string): Promise<Record<string, unknown>> {
  return JSON.parse((await p.call("GET", `/rules/${rule}/status`)).text) as Record<string, unknown>;
}

function exceptions(st: Record<string, unknown>): { total: number; last: string } {
  let total = 0;
  let last = "";
  for (const [k, v] of Object.entries(st)) {
    if (/^op_.*_exceptions_total$/.test(k) && typeof v === "number") total += v;
    if (/^op_.*_last_exception$/.test(k) && typeof v === "string" && v) last = v;
  }
  return { total, last };
}

async function push(v: number): Promise<void> {
  await until(async () => {
    const res = await fetch(`http://127.0.0.1:${port}/inbox`, { method: "POST", body: JSON.stringify({ v }) }).catch(() => undefined);
    return res?.status === 200 ? true : undefined;
  }, "the httppush endpoint");
}

test("a hanging UDF is a counted row error; REST answers while it runs", async () => {
  d = await startFloe(dir, env);
  const created = await d.call("POST", "/udf/javascript", { id: "hang", description: "", script: "function hang(v) { if (v > 0) while (true) {} return v + 100; }", isAgg: false });
  expect([created.status, created.text]).toEqual([201, "javascript function hang is created"]);
  const atLoad = await d.call("POST", "/udf/javascript", { id: "loadloop", script: "Promise.resolve().then(function l() { Promise.resolve().then(l); }); function loadloop() { return 1; }" });
  expect(atLoad.status).toBe(400);
  expect(JSON.parse(atLoad.text)).toEqual({ error: 1000, message: "javascript function create command error: time limit of 50ms exceeded" });
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM inbox () WITH (TYPE="httppush", DATASOURCE="/inbox", FORMAT="json")' })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "r1", sql: "SELECT hang(v) AS h FROM inbox", actions: [{ nop: {} }] })).status).toBe(201);
  for (const v of [1, 0, 2]) await push(v);
  const st = await until(async () => {
    const s = await status(d!, "r1");
    return exceptions(s).total >= 2 && s.sink_nop_0_0_records_out_total === 1 ? s : undefined;
  }, "2 row errors and 1 result");
  expect(exceptions(st).total).toBe(2);
  expect(exceptions(st).last).toBe("run Select error: alias: h expr: Call:{ name:hang, args:[inbox.v] } meet error, err:call func hang error: time limit of 50ms exceeded");
  expect(st.status).toBe("running");
  const t = performance.now();
  expect((await d.call("GET", "/ping")).status).toBe(200);
  expect(performance.now() - t).toBeLessThan(2000);
});

test("after kill -9 the daemon restarts on the same data dir: REST serves, the rule runs, calls error and are counted", async () => {
  expect(await d!.stop("SIGKILL")).not.toBe(0);
  // A script stored by an older floe that loops in a microtask at load.
  const kv = Kv.open(join(dir, "data"));
  kv.set("script", "oldloop", JSON.stringify({ id: "oldloop", description: "", script: "Promise.resolve().then(function l() { Promise.resolve().then(l); }); function oldloop() { return 1; }", isAgg: false }));
  kv.close();
  d = await startFloe(dir, env);
  expect(JSON.parse((await d.call("GET", "/udf/javascript")).text)).toEqual(["hang", "oldloop"]);
  expect(d.stderr()).toContain("cannot restore javascript function oldloop: time limit of 50ms exceeded");
  await until(async () => ((await status(d!, "r1")).status === "running" ? true : undefined), "rule r1 running");
  for (const v of [3, 0]) await push(v);
  const st = await until(async () => {
    const s = await status(d!, "r1");
    return exceptions(s).total >= 1 && s.sink_nop_0_0_records_out_total === 1 ? s : undefined;
  }, "1 row error and 1 result");
  expect(exceptions(st).total).toBe(1);
  expect(exceptions(st).last).toEndWith(" err:call func hang error: time limit of 50ms exceeded");
  // The broken script is defined: a rule using it gets row errors with the reason, and it can be deleted.
  expect((await d.call("POST", "/rules", { id: "r2", sql: "SELECT oldloop() AS x FROM inbox", actions: [{ nop: {} }] })).status).toBe(201);
  await until(async () => ((await status(d!, "r2")).status === "running" ? true : undefined), "rule r2 running");
  await push(0);
  const st2 = await until(async () => {
    const s = await status(d!, "r2");
    return exceptions(s).total >= 1 ? s : undefined;
  }, "r2's row error");
  expect(exceptions(st2).last).toEndWith(" err:call func oldloop error: time limit of 50ms exceeded");
  expect((await d.call("DELETE", "/udf/javascript/oldloop")).text).toBe("javascript function oldloop is deleted");
});
