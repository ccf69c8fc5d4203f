/**
 * A single `floe serve` (no group) killed with -9 loses no window result of an event-time rule
 * over a JetStream source with qos 1 (acknowledging at checkpoints) and a JetStream sink: the rows
 * the sink's stream holds after the restart equal one `floe run --replay` of the same data.
 * (1) Killed while a checkpoint covers windows whose results are still in the sink (its server is
 * down): the checkpoint must not be stored before they are confirmed. (2) Killed before any
 * checkpoint was stored, with half the data delivered and unacknowledged, the other half published
 * while it is down: the restart must read the first half again first, not after ackWait behind the
 * second half (too late for its windows). (3) As (1) with the sink's cache on: the results waiting
 * are on disk, so checkpoints go on covering them, and the restart sends them from the cache.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { decodeState } from "../../lib/store/state-codec.ts";
import { NatsServer } from "../helpers/nats.ts";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

const ROOT = join(import.meta.dir, "..", "..");
const T0 = Date.UTC(2026, 0, 1);
const SQL = "SELECT count(*) AS n, sum(v) AS s, window_end() AS we FROM s GROUP BY TUMBLINGWINDOW(ss, 5)";

/** 600 rows, one every 50 ms (6 windows of 5 s), and a tick 20 s later that closes the last one. */
function dataSet(): string[] {
  const out: string[] = [];
  for (let i = 0; i < 600; i++) out.push(JSON.stringify({ v: (i % 8) * 0.5, ts: T0 + 1234 + i * 50 }));
  out.push(JSON.stringify({ v: 0, ts: T0 + 1234 + 600 * 50 + 20_000 }));
  return out;
}

async function replay(data: readonly string[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "floe-single-kill-"));
  try {
    const input = join(dir, "in.ndjson");
    writeFileSync(input, data.map((d) => `{"stream":"s","ts":${(JSON.parse(d) as { ts: number }).ts},"data":${d}}`).join("\n") + "\n");
    const rule = join(dir, "rule.sql");
    writeFileSync(rule, `CREATE STREAM s (v float, ts bigint) WITH (DATASOURCE="s", FORMAT="json", TIMESTAMP="ts");\n${SQL};\n`);
    const proc = Bun.spawn([process.execPath, join(ROOT, "cli.ts"), "run", rule, "--input", input, "--replay", "-o", "isEventTime=true"], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`floe run --replay exited ${code}: ${err}`);
    return sorted(out.split("\n").filter((l) => l));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Rows as JSON text, arrays flattened, by window end. */
function sorted(lines: readonly string[]): string[] {
  const rows: { we: number }[] = [];
  for (const l of lines) {
    const v = JSON.parse(l) as unknown;
    for (const r of Array.isArray(v) ? v : [v]) rows.push(r as { we: number });
  }
  return rows.sort((a, b) => a.we - b.we).map((r) => JSON.stringify(r));
}

async function stored(nc: NatsConnection, stream: string): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const total = (await jsm.streams.info(stream)).state.messages;
  if (total === 0) return [];
  const info = await jsm.consumers.add(stream, { ack_policy: AckPolicy.None, inactive_threshold: 30_000_000_000 });
  const c = await jetstream(nc).consumers.get(stream, info.name);
  const iter = await c.consume();
  const lines: string[] = [];
  for await (const m of iter) {
    lines.push(m.string());
    if (lines.length >= total) break;
  }
  await iter.close();
  await jsm.consumers.delete(stream, info.name).catch(() => undefined);
  return sorted(lines);
}

/** The JetStream read position of the newest checkpoint of `rule` (-1: none). */
function checkpointSeq(home: string, rule: string): number {
  const path = join(home, "data", "checkpoint.db");
  if (!existsSync(path)) return -1;
  const db = new Database(path, { readonly: true });
  try {
    db.run("PRAGMA busy_timeout = 5000");
    if (!db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoint'").get()) return -1;
    const row = db.query("SELECT state FROM checkpoint WHERE rule = ? ORDER BY id DESC LIMIT 1").get(rule) as { state: string } | null;
    if (!row) return -1;
    const s = decodeState(row.state) as { sources: Record<string, { $$offset?: { seq?: number } }> };
    return s.sources.s?.$$offset?.seq ?? -1;
  } finally {
    db.close();
  }
}

async function recordsIn(d: DaemonProc): Promise<number> {
  const r = await d.call("GET", "/rules/r/status");
  if (r.status !== 200) return -1;
  return Number((JSON.parse(r.text) as Record<string, unknown>).source_s_0_records_in_total ?? -1);
}

let input: NatsServer;
let output: NatsServer;
let nc: NatsConnection;
let out: NatsConnection | undefined;
const daemons: DaemonProc[] = [];
const homes: string[] = [];

beforeAll(async () => {
  [input, output] = await Promise.all([NatsServer.start(), NatsServer.start()]);
  nc = await connect({ servers: input.url });
});

afterAll(async () => {
  for (const d of daemons) await d.stop("SIGKILL").catch(() => undefined);
  await out?.close().catch(() => undefined);
  await nc?.close().catch(() => undefined);
  await Promise.all([input?.stop(), output?.stop()]);
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

/**
 * A daemon in a new home with stream s over `IN_<tag>` (durable `d<tag>`, ackWait 2 s) and rule r
 * (qos 1) storing into `OUT_<tag>` on the output server, each row once (its window end is the message id).
 */
async function setUp(tag: string, checkpointInterval: number, sink: Record<string, unknown> = {}): Promise<{ home: string; d: DaemonProc }> {
  await (await jetstreamManager(nc)).streams.add({ name: `IN_${tag}`, subjects: [`in_${tag}`] });
  const home = tempHome();
  homes.push(home);
  const d = await startFloe(home);
  daemons.push(d);
  let r = await d.call("PUT", "/metadata/sources/nats/confKeys/n", { server: input.url });
  expect(r.status).toBe(200);
  const extra = JSON.stringify({ stream: `IN_${tag}`, durable: `d${tag}`, ackWait: "2s" });
  r = await d.call("POST", "/streams", {
    sql: `CREATE STREAM s (v float, ts bigint) WITH (TYPE="nats", DATASOURCE="in_${tag}", CONF_KEY="n", FORMAT="json", TIMESTAMP="ts", EXTRA=${JSON.stringify(extra)})`,
  });
  expect(r.status).toBe(201);
  r = await d.call("POST", "/rules", {
    id: "r",
    sql: SQL,
    actions: [{ nats: { server: output.url, subject: `out_${tag}`, jetstream: true, stream: `OUT_${tag}`, sendSingle: true, msgId: "{{.we}}", ...sink } }],
    options: { isEventTime: true, qos: 1, checkpointInterval },
  });
  expect(r.status).toBe(201);
  return { home, d };
}

async function outStream(tag: string): Promise<void> {
  out ??= await connect({ servers: output.url, reconnectTimeWait: 50, maxReconnectAttempts: -1 });
  await (await jetstreamManager(out)).streams.add({ name: `OUT_${tag}`, subjects: [`out_${tag}`], duplicate_window: 600_000_000_000 });
}

async function publish(tag: string, data: readonly string[]): Promise<void> {
  const js = jetstream(nc);
  for (const m of data) await js.publish(`in_${tag}`, m);
}

async function collect(tag: string, n: number): Promise<string[]> {
  let got: string[] = [];
  await waitFor(async () => (got = await stored(out!, `OUT_${tag}`)).length >= n, "every row stored", 15_000, 200).catch(() => undefined);
  return got;
}

test("killed while a checkpoint covers windows whose results the sink has not delivered: the restart delivers them", async () => {
  const data = dataSet();
  const want = await replay(data);
  await outStream("a");
  // The sink's server is down: the results of the first windows wait in the sink.
  await output.stop();
  const { home, d } = await setUp("a", 200);
  await publish("a", data.slice(0, 300));
  await waitFor(async () => (await recordsIn(d)) === 300, "the first half taken", 10_000);
  // A checkpoint holds everything read, so windows 1 and 2 are closed in it.
  await Bun.sleep(600);
  const covered = checkpointSeq(home, "r");
  expect(await d.stop("SIGKILL")).not.toBe(0);
  await output.restart();
  await publish("a", data.slice(300));
  daemons.push(await startFloe(home));
  const got = await collect("a", want.length);
  expect(want.length).toBeGreaterThan(6);
  console.log(`checkpoint at the kill covered sequence ${covered}`);
  expect(got).toEqual(want);
}, 60_000);

test("killed before any checkpoint was stored, the rest published while it is down: the restart reads the first half first", async () => {
  const data = dataSet();
  const want = await replay(data);
  await outStream("b");
  const { home, d } = await setUp("b", 600_000);
  await publish("b", data.slice(0, 300));
  await waitFor(async () => (await recordsIn(d)) === 300, "the first half taken", 10_000);
  expect(checkpointSeq(home, "r")).toBe(-1);
  expect(await d.stop("SIGKILL")).not.toBe(0);
  await publish("b", data.slice(300));
  daemons.push(await startFloe(home));
  // ackWait (2 s) passes: anything redelivered only then comes too late for its windows.
  const got = await collect("b", want.length);
  await Bun.sleep(3000);
  expect(await stored(out!, "OUT_b")).toEqual(want);
  expect(got).toEqual(want);
}, 60_000);

test("killed while the sink's server is down, with its cache on: checkpoints go on (the results are in the cache), the restart delivers them", async () => {
  const data = dataSet();
  const want = await replay(data);
  await outStream("c");
  await output.stop();
  const { home, d } = await setUp("c", 200, { enableCache: true });
  await publish("c", data.slice(0, 300));
  await waitFor(async () => (await recordsIn(d)) === 300, "the first half taken", 10_000);
  await waitFor(() => checkpointSeq(home, "r") === 300, "a checkpoint covering the first half", 10_000);
  expect(await d.stop("SIGKILL")).not.toBe(0);
  await output.restart();
  await publish("c", data.slice(300));
  daemons.push(await startFloe(home));
  expect(await collect("c", want.length)).toEqual(want);
}, 60_000);
