/**
 * The JetStream scenario of docs/group.md ("The scenario"), shared by `bench/cluster.ts` and
 * `test/cluster/jetstream-scenario.test.ts`: a fixed data set of D devices and M messages with
 * event timestamps is published into the JetStream stream IN over the 12-partition subject
 * `telemetry.<partition>.<device>` (device → partition fixed); a floe group of N members reads it
 * with one run per partition (durable per partition) and the rule
 *   SELECT deviceId, count(*) AS n, avg(v) AS a, window_end() AS we FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)
 * in event time with qos 1 into a JetStream `nats` sink (stream OUT, deduplicating by message id).
 * `window_end()` is selected so two windows of one device never have byte-identical rows (the
 * sink's default message id hashes the row). The deduplicated output is compared, row for row,
 * with a single `floe run --replay` of the same data.
 *
 * The group's partitions only see their own messages, so the last window of each partition is
 * closed by a `tick` message per partition 20 s after the data (rows of device `tick` are left out
 * of the comparison); the replay closes its last windows at the end of input.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { prng } from "./prng.ts";
import { startFloe, tempHome, type DaemonProc } from "../server/daemon.ts";
import { waitFor } from "./runtime.ts";
import { GROUP_SECRET, type NatsServer } from "./nats.ts";

export const PARTITIONS = 12;
const ROOT = join(import.meta.dir, "..", "..");
const T0 = Date.UTC(2026, 0, 1);

export interface Row {
  deviceId: string;
  n: number;
  a: number;
  we: number;
}

interface Msg {
  readonly p: number;
  readonly device: string;
  readonly body: string;
  readonly ts: number;
}

/** The data set: each device sends one message a second, in device order; v from a seeded generator. */
export function dataSet(devices: number, messages: number): Msg[] {
  const rnd = prng(14);
  const out: Msg[] = [];
  for (let i = 0; i < messages; i++) {
    const d = i % devices;
    const ts = T0 + Math.floor(i / devices) * 1000 + Math.floor((d * 1000) / devices);
    const v = Math.round(rnd() * 10_000) / 100;
    out.push({ p: d % PARTITIONS, device: `d${d}`, ts, body: JSON.stringify({ deviceId: `d${d}`, v, ts }) });
  }
  const end = (out.at(-1)?.ts ?? T0) + 20_000;
  for (let p = 0; p < PARTITIONS; p++) out.push({ p, device: "tick", ts: end, body: JSON.stringify({ deviceId: "tick", v: 0, ts: end }) });
  return out;
}

/** Publishes the data set into stream IN (created here), pipelined; messages per second. */
export async function publish(nc: NatsConnection, data: readonly Msg[]): Promise<number> {
  const js = jetstream(nc);
  const t0 = performance.now();
  let inflight: Promise<unknown>[] = [];
  for (const m of data) {
    // A generous timeout: a publish retried after a timeout would be stored out of order.
    inflight.push(js.publish(`telemetry.${m.p}.${m.device}`, m.body, { timeout: 60_000 }));
    if (inflight.length === 256) {
      await Promise.all(inflight);
      inflight = [];
    }
  }
  await Promise.all(inflight);
  return data.length / ((performance.now() - t0) / 1000);
}

export async function createStreams(jsm: JetStreamManager): Promise<void> {
  await jsm.streams.add({ name: "IN", subjects: ["telemetry.>"] });
  await jsm.streams.add(OUT);
}

const OUT = { name: "OUT", subjects: ["out.>"], duplicate_window: 600_000_000_000 };

/**
 * Stream OUT afresh: its duplicate window forgotten. Each group's rule `r` starts without a
 * checkpoint, so its sinks' default message ids (the emission keys, lib/sink/emission-keys.ts)
 * start from the rule's fingerprint — the same for every group of one run — and the stream would
 * drop a later group's output as duplicates of an earlier one's.
 */
export async function resetOut(jsm: JetStreamManager): Promise<void> {
  await jsm.streams.delete("OUT");
  await jsm.streams.add(OUT);
}

/** What one `floe run --replay` of the data set emits (pipe mode), ticks left out. */
export async function replay(data: readonly Msg[]): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), "floe-jsscen-"));
  const input = join(dir, "in.ndjson");
  writeFileSync(input, data.map((m) => `{"stream":"s","ts":${m.ts},"data":${m.body}}`).join("\n") + "\n");
  const rule = join(dir, "rule.sql");
  writeFileSync(
    rule,
    `CREATE STREAM s (deviceId string, v float, ts bigint) WITH (DATASOURCE="s", FORMAT="json", TIMESTAMP="ts");\n${SQL};\n`,
  );
  const proc = Bun.spawn([process.execPath, join(ROOT, "cli.ts"), "run", rule, "--input", input, "--replay", "-o", "isEventTime=true"], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`floe run --replay exited ${code}: ${err}`);
  return out
    .split("\n")
    .filter((l) => l)
    .map((l) => JSON.parse(l) as Row)
    .filter((r) => r.deviceId !== "tick");
}

export const SQL = "SELECT deviceId, count(*) AS n, avg(v) AS a, window_end() AS we FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)";

export interface Group {
  readonly members: DaemonProc[];
  readonly envs: Record<string, string>[];
}

export const until = (fn: () => Promise<boolean> | boolean, ms: number, what = "condition") => waitFor(fn, what, ms, 100);

async function json<T>(d: DaemonProc, path: string): Promise<T> {
  return JSON.parse((await d.call("GET", path)).text) as T;
}

/** Starts n members of group `group` and waits until each sees all of them live. */
export async function startGroup(nats: { readonly url: string }, group: string, n: number, fast: boolean, floe?: string[]): Promise<Group> {
  const members: DaemonProc[] = [];
  const envs: Record<string, string>[] = [];
  for (let i = 0; i < n; i++) {
    const env: Record<string, string> = {
      KUIPER__CLUSTER__NATS: nats.url,
    KUIPER__CLUSTER__SECRET: GROUP_SECRET,
      KUIPER__CLUSTER__GROUP: group,
      KUIPER__CLUSTER__INSTANCE: `m${i}`,
      KUIPER__CLUSTER__PARTITIONS: String(PARTITIONS),
      ...(fast ? { KUIPER__CLUSTER__HEARTBEATINTERVAL: "300ms", KUIPER__CLUSTER__LEASETIMEOUT: "2s" } : {}),
    };
    envs.push(env);
    members.push(await startFloe(tempHome(), env, [], floe));
  }
  await until(async () => {
    for (const m of members) if ((await json<{ instances: { live: boolean }[] }>(m, "/cluster")).instances.filter((x) => x.live).length !== n) return false;
    return true;
  }, 30_000, "group membership");
  return { members, envs };
}

/** Creates the stream and rule `id` (tag: durable and output subject names) on member 0; true once every partition runs. */
export async function createRule(g: Group, nats: { readonly url: string }, tag: string, id = "r"): Promise<void> {
  const a = g.members[0]!;
  let r = await a.call("PUT", "/metadata/sources/nats/confKeys/n", { server: nats.url });
  if (r.status !== 200) throw new Error(`confKey: ${r.text}`);
  const extra = JSON.stringify({ stream: "IN", durable: `${tag}_{partition}`, partitions: PARTITIONS, partitionKey: "deviceId", ackWait: "10s" });
  r = await a.call("POST", "/streams", {
    sql: `CREATE STREAM s (deviceId string, v float, ts bigint) WITH (TYPE="nats", DATASOURCE="telemetry.{partition}.*", CONF_KEY="n", FORMAT="json", TIMESTAMP="ts", EXTRA=${JSON.stringify(extra)})`,
  });
  if (r.status !== 201) throw new Error(`stream: ${r.text}`);
  const rule = {
    id,
    sql: SQL,
    actions: [{ nats: { server: nats.url, subject: `out.${tag}`, jetstream: true, stream: "OUT", sendSingle: true } }],
    options: { isEventTime: true, qos: 1, checkpointInterval: 500 },
  };
  r = await a.call("POST", "/rules", rule);
  if (r.status !== 201) throw new Error(`rule: ${r.text}`);
  await until(async () => {
    const runs = await Promise.all(g.members.map((f) => json<{ partitionedRules: Record<string, number[]> }>(f, "/cluster")));
    return runs.flatMap((v) => v.partitionedRules[id] ?? []).length === PARTITIONS;
  }, 30_000, "every partition running");
}

/** Waits until the live members run all partitions between them, then `settleMs` (1.5 s: long enough for a group checkpoint of each). */
export async function takenOver(live: readonly DaemonProc[], settleMs = 1500): Promise<void> {
  await until(async () => {
    const runs = await Promise.all(live.map((f) => json<{ partitionedRules: Record<string, number[]> }>(f, "/cluster")));
    return runs.flatMap((v) => v.partitionedRules.r ?? []).length === PARTITIONS;
  }, 30_000, "partitions taken over");
  await Bun.sleep(settleMs);
}

/** Messages the rule's sources took, over the live members. */
export async function recordsIn(g: Group): Promise<number> {
  for (const m of g.members) {
    if (m.proc.exitCode !== null || m.proc.killed) continue;
    try {
      return (await json<Record<string, number>>(m, "/v2/rules/r/status")).source_s_0_records_in_total ?? 0;
    } catch {
      // that member is going away
    }
  }
  return 0;
}

/** True when every partition's durable has nothing pending or unacknowledged. */
export async function drained(jsm: JetStreamManager, tag: string): Promise<boolean> {
  for (let p = 0; p < PARTITIONS; p++) {
    try {
      const i = await jsm.consumers.info("IN", `${tag}_${p}`);
      if (i.num_pending > 0 || i.num_ack_pending > 0) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** The rows stored in OUT under `out.<tag>`. */
export async function stored(nc: NatsConnection, tag: string): Promise<Row[]> {
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const total = (await jsm.streams.info("OUT", { subjects_filter: `out.${tag}` })).state.subjects?.[`out.${tag}`] ?? 0;
  const rows: Row[] = [];
  if (total === 0) return rows;
  // An ephemeral consumer: nats-server 2.9 has no ordered consumers with filter_subjects.
  const info = await jsm.consumers.add("OUT", { filter_subject: `out.${tag}`, ack_policy: AckPolicy.None, inactive_threshold: 30_000_000_000 });
  const c = await js.consumers.get("OUT", info.name);
  const iter = await c.consume();
  for await (const m of iter) {
    rows.push(m.json<Row>());
    if (rows.length >= total) break;
  }
  await iter.close();
  await jsm.consumers.delete("OUT", info.name).catch(() => undefined);
  return rows;
}

export interface Comparison {
  exact: boolean;
  rows: number;
  expected: number;
  lost: number;
  wrong: number;
  extra: number;
  duplicateKeys: number;
  /** Partition → window end → rows lost or wrong there (where a difference is). */
  where: Record<string, Record<string, number>>;
  /** A few wrong rows: [expected, got]. */
  examples: [Row, Row][];
}

const key = (r: Row) => `${r.deviceId}@${r.we}`;

export function compare(got: readonly Row[], want: readonly Row[]): Comparison {
  const w = new Map(want.map((r) => [key(r), r]));
  const seen = new Set<string>();
  let wrong = 0;
  let extra = 0;
  const where: Record<string, Record<string, number>> = {};
  const examples: [Row, Row][] = [];
  const at = (r: Row) => {
    const p = String(Number(r.deviceId.slice(1)) % PARTITIONS);
    const byWe = (where[p] ??= {});
    byWe[r.we] = (byWe[r.we] ?? 0) + 1;
  };
  let dup = 0;
  for (const r of got) {
    if (r.deviceId === "tick") continue;
    const k = key(r);
    if (seen.has(k)) {
      dup++;
      continue;
    }
    seen.add(k);
    const e = w.get(k);
    if (!e) extra++;
    else if (e.n !== r.n || e.a !== r.a) {
      wrong++;
      if (examples.length < 4) examples.push([e, r]);
      at(e);
    }
  }
  let lost = 0;
  for (const [k, r] of w)
    if (!seen.has(k)) {
      lost++;
      at(r);
    }
  return { exact: lost === 0 && wrong === 0 && extra === 0 && dup === 0, rows: seen.size, expected: want.length, lost, wrong, extra, duplicateKeys: dup, where, examples };
}

/** Counts every publish on `out.<tag>` as the sinks made it (core subscribers see duplicates the stream drops). */
export function countPublishes(nc: NatsConnection, tag: string): { readonly count: () => number; stop: () => void } {
  let n = 0;
  const sub = nc.subscribe(`out.${tag}`, { callback: () => void n++ });
  return { count: () => n, stop: () => sub.unsubscribe() };
}

export { connect, jetstreamManager };
