/**
 * Two-stage aggregation (docs/group.md): devices multiplexed over 4 gateway connections, the
 * stream partitioned by gateway, the rule grouped by device — each device's rows of a window are
 * spread over every partition. Two members run the partitions; the owner of partition 0 merges
 * the partials. The rows the rule stores into a JetStream stream equal one `floe run --replay` of
 * the same data, row for row and in order — also when the merging member is killed with -9
 * mid-stream (the survivor rebuilds the merge from the partials stream, re-sends from the last
 * released window, and the sink's stream drops the duplicates) (HAVING, ORDER BY and LIMIT included). Gateway 3 is
 * silent in the first window, in windows 5–7 and in the last two: the merge releases those only
 * on its empty markers (no later partial of that partition says it closed them).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { NatsServer } from "../helpers/nats.ts";
import { startGroup, until, type Group } from "../helpers/js-scenario.ts";
import { startFloe, type DaemonProc } from "../server/daemon.ts";

const ROOT = join(import.meta.dir, "..", "..");
const T0 = Date.UTC(2026, 0, 1);
const GATEWAYS = 4;
const SQL =
  "SELECT deviceId, count(*) AS n, sum(v) AS s, avg(v) AS a, min(v) AS lo, max(v) AS hi, window_start() AS ws, window_end() AS we FROM s " +
  "WHERE v >= 0.5 GROUP BY deviceId, TUMBLINGWINDOW(ss, 5) HAVING count(*) > 2 ORDER BY hi DESC, deviceId LIMIT 8";

interface Msg {
  readonly gw: number;
  readonly ts: number;
  readonly body: string;
}

/** 2,400 messages of 12 devices, one every 50 ms; v in steps of 0.25 (exact float sums in any order). */
function dataSet(): Msg[] {
  const out: Msg[] = [];
  for (let i = 0; i < 2400; i++) {
    const ts = T0 + 1234 + i * 50;
    const w = Math.floor((ts - T0) / 5000);
    let gw = (i * 7 + Math.floor(i / 12)) % GATEWAYS;
    if (gw === 3 && (w === 0 || (w >= 5 && w <= 7) || w >= 23)) gw = 2;
    const v = ((i * 13) % 40) * 0.25;
    out.push({ gw, ts, body: JSON.stringify({ deviceId: `d${i % 12}`, gw, v, ts }) });
  }
  // Closes the last windows of every partition (rows of device `tick` are not compared).
  const end = out.at(-1)!.ts + 20_000;
  for (let gw = 0; gw < GATEWAYS; gw++) out.push({ gw, ts: end, body: JSON.stringify({ deviceId: "tick", gw, v: 1, ts: end }) });
  return out;
}

async function replay(data: readonly Msg[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "floe-twostage-"));
  const input = join(dir, "in.ndjson");
  writeFileSync(input, data.map((m) => `{"stream":"s","ts":${m.ts},"data":${m.body}}`).join("\n") + "\n");
  const rule = join(dir, "rule.sql");
  writeFileSync(rule, `CREATE STREAM s (deviceId string, gw bigint, v float, ts bigint) WITH (DATASOURCE="s", FORMAT="json", TIMESTAMP="ts");\n${SQL};\n`);
  const proc = Bun.spawn([process.execPath, join(ROOT, "cli.ts"), "run", rule, "--input", input, "--replay", "-o", "isEventTime=true"], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`floe run --replay exited ${code}: ${err}`);
  return rowsOf(out.split("\n").filter((l) => l));
}

/** Rows as JSON text, arrays flattened, ticks left out. */
function rowsOf(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const l of lines) {
    const v = JSON.parse(l) as unknown;
    for (const r of Array.isArray(v) ? v : [v]) if ((r as { deviceId?: string }).deviceId !== "tick") out.push(JSON.stringify(r));
  }
  return out;
}

/** Rows by window end (ascending), in their order within the window. */
function byWindow(rows: readonly string[]): [number, string[]][] {
  const m = new Map<number, string[]>();
  for (const r of rows) {
    const we = (JSON.parse(r) as { we: number }).we;
    const l = m.get(we);
    if (l) l.push(r);
    else m.set(we, [r]);
  }
  return [...m].sort((a, b) => a[0] - b[0]);
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
  return rowsOf(lines);
}

let nats: NatsServer | undefined;
const groups: Group[] = [];
let nc: NatsConnection | undefined;

beforeAll(async () => {
  nats = await NatsServer.start();
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  for (const g of groups) for (const m of g.members) await m.stop("SIGKILL");
  await nats?.stop();
});

interface View {
  partitionedRules: Record<string, number[]>;
}
const view = async (m: DaemonProc) => JSON.parse((await m.call("GET", "/cluster")).text) as View;

/** Starts 2 members of group `ts<tag>` with the stream and rule of `tag` (its own streams and durables); resolves once every partition runs. */
async function start(tag: string, sink: Record<string, unknown> = {}): Promise<Group> {
  const jsm = await jetstreamManager(nc!);
  await jsm.streams.add({ name: `IN_${tag}`, subjects: [`tele_${tag}.>`] });
  await jsm.streams.add({ name: `OUT_${tag}`, subjects: [`out_${tag}.>`], duplicate_window: 600_000_000_000 });
  const g = await startGroup(nats!, `ts${tag}`, 2, true);
  groups.push(g);
  const a = g.members[0]!;
  let r = await a.call("PUT", "/metadata/sources/nats/confKeys/n", { server: nats!.url });
  expect(r.status).toBe(200);
  const extra = JSON.stringify({ stream: `IN_${tag}`, durable: `${tag}_{partition}`, partitions: GATEWAYS, partitionKey: "gw", ackWait: "10s" });
  r = await a.call("POST", "/streams", {
    sql: `CREATE STREAM s (deviceId string, gw bigint, v float, ts bigint) WITH (TYPE="nats", DATASOURCE="tele_${tag}.{partition}.*", CONF_KEY="n", FORMAT="json", TIMESTAMP="ts", EXTRA=${JSON.stringify(extra)})`,
  });
  expect(r.status).toBe(201);
  r = await a.call("POST", "/rules", {
    id: "r",
    sql: SQL,
    actions: [{ nats: { server: nats!.url, subject: `out_${tag}.r`, jetstream: true, stream: `OUT_${tag}`, sendSingle: true, ...sink } }],
    options: { isEventTime: true, qos: 1, checkpointInterval: 500 },
  });
  expect(r.status).toBe(201);
  await runsAll(g.members);
  return g;
}

async function runsAll(live: readonly DaemonProc[]): Promise<void> {
  await until(async () => (await Promise.all(live.map(view))).flatMap((v) => v.partitionedRules.r ?? []).length === GATEWAYS, 30_000, "every partition running");
}

async function send(tag: string, data: readonly Msg[]): Promise<void> {
  const js = jetstream(nc!);
  await Promise.all(data.map((m) => js.publish(`tele_${tag}.${m.gw}.x`, m.body, { timeout: 60_000 })));
}

async function collect(tag: string, n: number): Promise<string[]> {
  let got: string[] = [];
  await until(async () => (got = await stored(nc!, `OUT_${tag}`)).length >= n, 20_000, "every row stored").catch(() => undefined);
  return got;
}

test("GROUP BY a key that is not the partition key: the merged output of 2 members equals a single replay", async () => {
  const data = dataSet();
  const [want, g] = await Promise.all([replay(data), start("a")]);
  await send("a", data);
  const got = await collect("a", want.length);
  const logs = g.members.map((m) => m.stderr()).join("\n");
  expect(logs).toContain("rule r: GROUP BY does not contain gw, the partition key of stream s: two-stage aggregation");
  expect(logs).toContain("rule r: merging the partials of 4 partitions here");
  expect(want.length).toBeGreaterThan(100);
  expect(got).toEqual(want);
  // Deleting the rule deletes its partials.
  const jsm = await jetstreamManager(nc!);
  expect((await jsm.streams.info("floe_tsa_partials")).state.messages).toBeGreaterThan(0);
  expect((await g.members[1]!.call("DELETE", "/rules/r")).status).toBe(200);
  expect((await jsm.streams.info("floe_tsa_partials")).state.messages).toBe(0);
  // A rule that cannot be split runs per partition as before, and the warning says why.
  const r2 = await g.members[0]!.call("POST", "/rules", {
    id: "r2",
    sql: "SELECT deviceId, collect(v) AS vs FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 5)",
    actions: [{ nop: {} }],
    options: { isEventTime: true },
  });
  expect(r2.status).toBe(201);
  await until(
    () => g.members.every((m) => m.stderr().includes("rule r2: GROUP BY does not contain gw, the partition key of stream s: each partition computes its own groups; not two-stage: collect() is not decomposable into partial aggregates")),
    10_000,
    "the warning on every member",
  );
}, 60_000);

test("the merging member killed mid-stream: the survivor rebuilds the merge from the partials, the output still equals a single replay", async () => {
  const data = dataSet();
  // A new merge run's emission keys differ from the last one's: the message id names the row's window, so the re-sent rows are dropped.
  const [want, g] = await Promise.all([replay(data), start("b", { msgId: "{{.deviceId}}-{{.we}}" })]);
  await send("b", data.slice(0, 1200));
  await until(async () => (await stored(nc!, "OUT_b")).length > 0, 20_000, "the first merged rows");
  const views = await Promise.all(g.members.map(view));
  const merger = views.findIndex((v) => (v.partitionedRules.r ?? []).includes(0));
  const survivor = g.members[1 - merger]!;
  g.members[merger]!.proc.kill("SIGKILL");
  await send("b", data.slice(1200));
  await runsAll([survivor]);
  g.members[merger] = await startFloe(g.members[merger]!.dir, g.envs[merger]!);
  const got = await collect("b", want.length);
  expect(survivor.stderr()).toContain("rule r: merging the partials of 4 partitions here");
  // Around an ownership change two merges' sinks may store windows interleaved; each window's rows keep their order.
  expect(byWindow(got)).toEqual(byWindow(want));
  expect(got.length).toBe(want.length);
}, 60_000);
