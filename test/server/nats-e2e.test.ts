/**
 * JetStream in and out of a `floe serve` killed with -9 mid-stream. A stateless
 * rule acknowledges what it took, after its cached sink wrote it (what it had not acknowledged
 * comes back after ackWait); a count-window rule at qos 1 acknowledges at each stored checkpoint
 * and, restored, restarts its consumer right after the checkpoint's last sequence, so the window
 * sees the same messages in the same order. The JetStream sink's Nats-Msg-Id deduplicates what is published again.
 * Both outputs are then exact: every input once, every window once with its full count.
 */
import { afterAll, expect, test } from "bun:test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { NatsServer } from "../helpers/nats.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";
import { waitFor as waitForAt } from "../helpers/runtime.ts";

let server: NatsServer | undefined;
let nc: NatsConnection | undefined;
let d: DaemonProc | undefined;

afterAll(async () => {
  if (d && d.proc.exitCode === null) await d.stop("SIGKILL");
  await nc?.close();
  await server?.stop();
});

const waitFor = (cond: () => boolean | Promise<boolean>, what: string, ms = 30_000) => waitForAt(cond, what, ms, 20);

async function status(p: DaemonProc, id: string): Promise<Record<string, unknown>> {
  const r = await p.call("GET", `/rules/${id}/status`);
  expect(r.status).toBe(200);
  return JSON.parse(r.text) as Record<string, unknown>;
}

/** How many messages of `subject` stream `stream` holds (one request, where reading them all is thousands). */
async function count(jsm: JetStreamManager, stream: string, subject: string): Promise<number> {
  return (await jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
}

/** Every stored message of stream `stream`, parsed, by subject (one pass). */
async function stored(jsm: JetStreamManager, stream: string): Promise<Map<string, Record<string, number>[]>> {
  const out = new Map<string, Record<string, number>[]>();
  const last = (await jsm.streams.info(stream)).state.last_seq;
  for (let seq = 1; seq <= last; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (!m) continue;
    const l = out.get(m.subject) ?? [];
    l.push(m.json<Record<string, number>>());
    out.set(m.subject, l);
  }
  return out;
}

test("JetStream durable consumers resume after kill -9 without loss; window counts stay exact; the sink deduplicates", async () => {
  const N = 3000;
  server = await NatsServer.start();
  nc = await connect({ servers: server.url });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  await jsm.streams.add({ name: "IN", subjects: ["in.>"] });
  await jsm.streams.add({ name: "OUT", subjects: ["out.>"] });
  // confKeys from etc/sources/nats.yaml and REST.
  const yaml = [`default:`, `  server: ${server.url}`, `fwd:`, `  stream: IN`, `  durable: fwd`, `  pullBatch: 64`, `  ackWait: 1s`, ""].join("\n");
  const dir = tempHome({ "sources/nats.yaml": yaml });
  const env = {};
  d = await startFloe(dir, env);
  const mk = async (sql: string) => expect((await d!.call("POST", "/streams", { sql })).status).toBe(201);
  await mk('CREATE STREAM fwdin () WITH (TYPE="nats", DATASOURCE="in.fwd", FORMAT="json", CONF_KEY="fwd")');
  await mk('CREATE STREAM winin () WITH (TYPE="nats", DATASOURCE="in.win", FORMAT="json", CONF_KEY="win")');
  // This one through REST (`/metadata/sources/nats/confKeys`).
  expect((await d.call("PUT", "/metadata/sources/nats/confKeys/win", { stream: "IN", durable: "win", pullBatch: 64 })).status).toBe(200);
  const sink = (subject: string) => ({ nats: { server: server!.url, subject, jetstream: true, sendSingle: true, enableCache: true } });
  expect((await d.call("POST", "/rules", { id: "fwd", sql: "SELECT n FROM fwdin", actions: [sink("out.fwd")] })).status).toBe(201);
  const win = {
    id: "win",
    sql: "SELECT count(*) AS c, max(n) AS last FROM winin GROUP BY COUNTWINDOW(100)",
    options: { qos: 1, checkpointInterval: 100 },
    actions: [sink("out.win")],
  };
  expect((await d.call("POST", "/rules", win)).status).toBe(201);
  await waitFor(async () => (await status(d!, "fwd")).source_fwdin_0_connection_status === 1 && (await status(d!, "win")).source_winin_0_connection_status === 1, "both consumers");

  // Published while the daemon runs; killed once each rule has taken part of it.
  const pubs: Promise<unknown>[] = [];
  for (let n = 0; n < N; n++) {
    pubs.push(js.publish("in.fwd", JSON.stringify({ n })), js.publish("in.win", JSON.stringify({ n })));
    if (pubs.length >= 256) await Promise.all(pubs.splice(0));
  }
  await Promise.all(pubs);
  await waitFor(async () => {
    const a = await status(d!, "fwd");
    const b = await status(d!, "win");
    return (a.source_fwdin_0_records_in_total as number) > 300 && (b.source_winin_0_records_in_total as number) > 1000;
  }, "both rules part-way");
  expect(await d.stop("SIGKILL")).not.toBe(0);

  d = await startFloe(dir, env);
  await waitFor(async () => (await jsm.consumers.info("IN", "fwd")).ack_floor.stream_seq >= 2 * N - 1, "fwd consumed everything", 60_000);
  await waitFor(async () => (await count(jsm, "OUT", "out.win")) >= N / 100, "all windows", 60_000);
  await waitFor(async () => (await status(d!, "fwd")).sink_nats_0_0_buffer_length === 0, "fwd sink idle");
  // A fixed wait, to show that no late duplicate follows the last result.
  await Bun.sleep(300);

  const out = await stored(jsm, "OUT");
  const fwd = (out.get("out.fwd") ?? []).map((r) => r.n!);
  expect(fwd.length).toBe(N);
  expect([...fwd].sort((a, b) => a - b)).toEqual([...Array(N).keys()]);
  const wins = (out.get("out.win") ?? []).sort((a, b) => a.last! - b.last!);
  expect(wins).toEqual([...Array(N / 100).keys()].map((i) => ({ c: 100, last: i * 100 + 99 })));
  expect((await status(d, "fwd")).source_fwdin_0_records_lost_total).toBe(0);
  expect((await status(d, "win")).source_winin_0_records_lost_total).toBe(0);
}, 120_000);

test("a nats connection created over REST is live, shared by the nodes selecting it, and reports its status", async () => {
  server ??= await NatsServer.start();
  const dir = tempHome();
  const p = await startFloe(dir);
  try {
    const bad = await p.call("POST", "/connections", { id: "nbad", typ: "nats", props: { server: "http://x" } });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("invalid server url http://x: the scheme must be nats:// or tls://");
    expect((await p.call("POST", "/connections", { id: "n1", typ: "nats", props: { server: server.url } })).status).toBe(201);
    await waitFor(async () => JSON.parse((await p.call("GET", "/connections/n1")).text).status === "connected", "the connection");
    expect((await p.call("POST", "/streams", { sql: 'CREATE STREAM ns () WITH (TYPE="nats", DATASOURCE="rest.in", CONF_KEY="viaconn")' })).status).toBe(201);
    expect((await p.call("PUT", "/metadata/sources/nats/confKeys/viaconn", { connectionSelector: "n1" })).status).toBe(200);
    const r = await p.call("POST", "/rules", { id: "nr", sql: "SELECT x FROM ns", actions: [{ nats: { connectionSelector: "n1", subject: "rest.out", sendSingle: true } }] });
    expect(r.status).toBe(201);
    await waitFor(async () => JSON.parse((await p.call("GET", "/connections/n1")).text).refCount === 2, "two nodes attached");
    const c = await connect({ servers: server!.url });
    const got: string[] = [];
    c.subscribe("rest.out", { callback: (_e, m) => void got.push(m.string()) });
    await c.flush();
    c.publish("rest.in", JSON.stringify({ x: 7 }));
    await waitFor(() => got.length === 1, "the result");
    expect(got).toEqual(['{"x":7}']);
    await c.close();
  } finally {
    await p.stop("SIGKILL");
  }
}, 60_000);
