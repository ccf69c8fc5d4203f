/**
 * The httppush source (rules-and-sinks.md §11.4) through real rules and real HTTP on the data
 * server: decoding, 404/405, a shared endpoint, property errors, and backpressure (a request is
 * answered only once admitted; `bufferLength` bounds the waiting ones).
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collect, dataRuntime, freePort } from "../../helpers/data-server.ts";
import { streams, waitFor, waitForValue, type TestRuntime } from "../../helpers/runtime.ts";
import type { RunHandle } from "../../../lib/runtime/rule.ts";

const open: { t: TestRuntime; rules: RunHandle[] }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    for (const r of o.rules) await r.stop();
    o.t.env.dataServer.close();
  }
});

/** An EXTRA option value: the props as a JSON text in an SQL string literal. */
const extra = (props: Record<string, unknown>): string => JSON.stringify(JSON.stringify(props));

function post(t: TestRuntime, path: string, body: string, method = "POST"): Promise<Response> {
  return fetch(`http://127.0.0.1:${t.env.dataServer.port}${path}`, { method, body });
}

test("each request body is one message decoded by FORMAT; the reply is 200 ok", async () => {
  const t = dataRuntime();
  const defs = streams(`CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/push/a", FORMAT="json")`);
  const got = collect(t, "out/a");
  const rule = await t.rule({ id: "hp1", sql: "SELECT a * 2 AS b FROM s", actions: [{ memory: { sendSingle: true, topic: "out/a" } }] }, defs).start();
  open.push({ t, rules: [rule] });
  for (const a of [1, 2, 3]) {
    const r = await post(t, "/push/a", JSON.stringify({ a }));
    expect(r.status).toBe(200);
    expect(await r.text()).toBe("ok");
  }
  await waitFor(() => got.length === 3, "3 rows");
  expect(got).toEqual(['{"b":2}', '{"b":4}', '{"b":6}']);
  expect(rule.metrics().source_s_0_connection_status).toBe(1);
  expect(rule.metrics().op_2_decoder_0_records_out_total).toBe(3);
  // A body that is not JSON is a decoder exception; the request was still admitted.
  expect((await post(t, "/push/a", "not json")).status).toBe(200);
  await waitFor(() => rule.metrics().op_2_decoder_0_exceptions_total === 1, "a decode error");
});

test("an unknown path is 404, another method 405; PUT endpoints take PUT", async () => {
  const t = dataRuntime();
  const defs = streams(`CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/p", CONF_KEY="x", EXTRA=${extra({ method: "PUT" })})`);
  const rule = await t.rule({ id: "hp2", sql: "SELECT * FROM s", actions: [{ nop: {} }] }, defs).start();
  open.push({ t, rules: [rule] });
  const nf = await post(t, "/nope", "{}");
  expect(nf.status).toBe(404);
  expect(await nf.text()).toBe("404 page not found\n");
  expect((await post(t, "/p", "{}", "POST")).status).toBe(405);
  const ok = await post(t, "/p", '{"x":1}', "PUT");
  expect([ok.status, await ok.text()]).toEqual([200, "ok"]);
  await waitFor(() => rule.metrics().sink_nop_0_0_records_in_total === 1, "one row");
});

test("several streams on one endpoint and method share it: every request reaches each", async () => {
  const t = dataRuntime();
  const defs = streams(
    `CREATE STREAM s1 () WITH (TYPE="httppush", DATASOURCE="/shared")`,
    `CREATE STREAM s2 () WITH (TYPE="httppush", DATASOURCE="/shared")`,
  );
  const g1 = collect(t, "out/s1");
  const g2 = collect(t, "out/s2");
  const r1 = await t.rule({ id: "hp3a", sql: "SELECT a FROM s1", actions: [{ memory: { sendSingle: true, topic: "out/s1" } }] }, defs).start();
  const r2 = await t.rule({ id: "hp3b", sql: "SELECT a + 10 AS a FROM s2", actions: [{ memory: { sendSingle: true, topic: "out/s2" } }] }, defs).start();
  open.push({ t, rules: [r1, r2] });
  expect((await post(t, "/shared", '{"a":1}')).status).toBe(200);
  await waitFor(() => g1.length === 1 && g2.length === 1, "both rules");
  expect([g1, g2]).toEqual([['{"a":1}'], ['{"a":11}']]);
  // The endpoint stays while one stream still uses it, and goes with the last.
  await r1.stop();
  expect((await post(t, "/shared", '{"a":2}')).status).toBe(200);
  await waitFor(() => g2.length === 2, "the remaining rule");
  await r2.stop();
  expect(t.env.dataServer.listening).toBe(false);
});

test("property errors are eKuiper's texts", async () => {
  const t = dataRuntime();
  const start = async (opts: string) => {
    const rule = t.rule({ id: "hpe", sql: "SELECT * FROM s", actions: [{ nop: {} }] }, streams(`CREATE STREAM s () WITH (TYPE="httppush", ${opts})`));
    try {
      const run = await rule.start();
      await run.stop();
      return "";
    } catch (e) {
      return (e as Error).message;
    }
  };
  expect(await start(`DATASOURCE="push"`)).toContain("property `endpoint` must start with /");
  expect(await start(`DATASOURCE="/x", EXTRA=${extra({ method: "GET" })}`)).toContain("method GET is not supported, must be POST or PUT");
  expect(await start(`DATASOURCE="/x", EXTRA=${extra({ method: "post" })}`)).toContain("method post is not supported, must be POST or PUT");
});

test("backpressure: while the rule cannot take more, requests wait for admission, and bufferLength bounds the waiting", async () => {
  // A REST target that holds every response until released keeps the rule's queues full.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const seen: string[] = [];
  const target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      seen.push(await req.text());
      await gate;
      return new Response("ok");
    },
  });
  try {
    const t = dataRuntime();
    const defs = streams(`CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/bp", EXTRA=${extra({ bufferLength: 4 })})`);
    const rule = await t.rule(
      {
        id: "hpbp",
        sql: "SELECT n FROM s",
        actions: [{ rest: { url: `http://127.0.0.1:${target.port}/`, method: "post", sendSingle: true, bufferLength: 1 } }],
        options: { bufferLength: 1, disableBufferFullDiscard: true },
      },
      defs,
    ).start();
    open.push({ t, rules: [rule] });
    const replies: (number | "pending")[] = [];
    const sent: Promise<void>[] = [];
    for (let n = 0; n < 12; n++) {
      const i = n;
      replies.push("pending");
      sent.push(post(t, "/bp", JSON.stringify({ n })).then(async (r) => void (replies[i] = r.status)));
      // A fixed pause: one at a time so the order of arrival is the order of n (a request that waits
      // for admission shows nowhere to wait on).
      await Bun.sleep(20);
    }
    await waitFor(() => replies.filter((r) => r === 503).length > 0, "a refused request");
    // A fixed wait, to show that the waiting requests stay waiting.
    await Bun.sleep(100);
    const pending = replies.filter((r) => r === "pending").length;
    // Requests wait rather than being acknowledged: exactly bufferLength of them.
    expect(pending).toBe(4);
    expect(rule.metrics().source_s_0_exceptions_total).toBeGreaterThan(0);
    release();
    await Promise.all(sent);
    const ok = replies.filter((r) => r === 200).length;
    expect(ok + replies.filter((r) => r === 503).length).toBe(12);
    await waitFor(() => seen.length === ok, `${ok} rows at the target`);
    // Admitted rows arrive in order, none lost.
    const ns = seen.map((s) => (JSON.parse(s) as { n: number }).n);
    expect(ns).toEqual([...ns].sort((a, b) => a - b));
  } finally {
    target.stop(true);
  }
}, 20_000);

test("pipe mode: `floe run` serves an httppush stream and prints its results until SIGINT", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-httppush-"));
  const rule = join(dir, "push.sql");
  writeFileSync(rule, `CREATE STREAM inbox () WITH (TYPE="httppush", DATASOURCE="/inbox");\nSELECT id, temp * 2 AS t2 FROM inbox WHERE temp > 20`);
  const port = freePort();
  const p = Bun.spawn([process.execPath, join(import.meta.dir, "../../../cli.ts"), "run", rule], {
    cwd: dir,
    env: { ...process.env, KUIPER__SOURCE__HTTPSERVERPORT: String(port) },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const outPump = (async () => {
    for await (const c of p.stdout) out += new TextDecoder().decode(c);
  })();
  const send = (id: number, temp: number): Promise<Response> => fetch(`http://127.0.0.1:${port}/inbox`, { method: "POST", body: JSON.stringify({ id, temp }) });
  // The first request is retried until `floe run` serves /inbox.
  const first = await waitForValue(() => send(1, 25).catch(() => undefined), "floe run to serve /inbox", 15_000, 20);
  const replies = [await first.text(), await (await send(2, 10)).text(), await (await send(3, 30)).text()];
  expect(replies).toEqual(["ok", "ok", "ok"]);
  await waitFor(() => out.split("\n").length === 3, () => `two results on stdout (got ${JSON.stringify(out)})`);
  p.kill("SIGINT");
  const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  await outPump;
  expect(err).toBe("");
  expect(code).toBe(0);
  expect(out).toBe('{"id":1,"t2":50}\n{"id":3,"t2":60}\n');
}, 20_000);
