/**
 * The scenario of docs/group.md ("The scenario"), runnable by anyone: a NATS server with JetStream on
 * free ports; a fixed data set (D devices, M messages, event timestamps, device → partition fixed)
 * in the JetStream stream IN over the 12-partition subject `telemetry.<partition>.<device>`; floe
 * groups of `floe serve` members reading it with one run per partition (durable per partition) and
 *   SELECT deviceId, count(*) AS n, avg(v) AS a, window_end() AS we FROM s GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)
 * in event time (TIMESTAMP="ts"), qos 1, into a JetStream `nats` sink (stream OUT; default message
 * ids, so a replayed emission is stored once). Shared with the suite: test/helpers/js-scenario.ts.
 *
 * 1. Throughput: for each member count of `--members` a fresh group reads the whole (already
 *    published) data set; the rate is measured once every partition runs, from 30 % to 90 % of
 *    what its durables had left to deliver then (start-up, JIT warm-up and tail excluded; counted
 *    by delivery, as acknowledgements come in steps at checkpoints), with the members'
 *    and NATS's CPU over the same span; the time from the rule's creation until every partition's
 *    durable has delivered and acknowledged everything is printed too.
 * 2. Exactness: `--kill-members` members; half the data is published, the rule created, the rest
 *    published while it runs; once the group has taken ⅓ of it one member is killed with -9, and
 *    restarted after the others took its partitions over. The output stored in OUT is compared
 *    row for row with one `floe run --replay` of the same data: `exact: yes|no`, rows, duplicates
 *    suppressed (sink publishes the stream dropped as already stored), lost, wrong.
 *
 *    The failover time is from the kill to the first output (a publish the sinks made, deduplicated
 *    or not) of a partition the killed member ran, sent by its next owner (a newer Floe-Epoch).
 *
 *   node_modules/.bin/bun bench/cluster.ts [--devices 1000] [--messages 500000] [--members 1,2,3] [--kill-members 3] [--nats-cluster] [--cpu-quota Q] [--warmup F] [--json FILE] [--logs DIR]
 *
 * Without `--cpu-quota` all members share the machine's cores with NATS: on 2 cores the scaling
 * ratio cannot reach the member count (see the printed load). `--cpu-quota 0.25` puts member i in
 * the cgroup v1 group `floe-m<i>` (bench/cgroup.ts) holding it to a quarter of a core — a small
 * gateway each — while NATS and this process run unconstrained: the ratio then shows what the
 * group itself scales (root and /sys/fs/cgroup/cpu needed).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { NatsCluster, NatsServer } from "../test/helpers/nats.ts";
import { compare, connect, countPublishes, createRule, createStreams, dataSet, drained, jetstreamManager, publish, recordsIn, replay, resetOut, startGroup, stored, takenOver, until, type Group } from "../test/helpers/js-scenario.ts";
import { startFloe, type DaemonProc } from "../test/server/daemon.ts";
import { Kvm } from "@nats-io/kv";
import { CpuQuota, cpuSeconds } from "./cgroup.ts";
import { freePort } from "../test/helpers/mosquitto.ts";

const { values } = parseArgs({
  options: {
    members: { type: "string", default: "1,2,3" },
    "kill-members": { type: "string", default: "3" },
    messages: { type: "string", default: "500000" },
    devices: { type: "string", default: "1000" },
    json: { type: "string" },
    "nats-cluster": { type: "boolean", default: false },
    "cpu-quota": { type: "string" },
    warmup: { type: "string", default: "0" },
    profile: { type: "string" },
    logs: { type: "string" },
    traffic: { type: "boolean", default: false },
  },
});
const QUOTA = values["cpu-quota"] === undefined ? undefined : Number(values["cpu-quota"]);
/** `--warmup F`: each throughput group first reads F of the data set with a throw-away copy of the rule (its members' JIT warm, as a long-running gateway's is). */
const WARMUP = Number(values.warmup);
/**
 * `--profile DIR`: each member runs under bun's CPU profiler (a .cpuprofile and a markdown summary
 * in DIR, written when it stops: members are then stopped with SIGTERM, not -9, after the
 * throughput part; the kill part is the same).
 */
const PROFILE = values.profile;
/** `--logs DIR`: every member's whole log, one file per member and group (`t<n>-m<i>.log`, `kill-m<i>.log`; the killed member's first life `kill-m<i>-killed.log`). */
const LOGS = values.logs;
function saveLog(name: string, m: DaemonProc): void {
  if (LOGS === undefined) return;
  mkdirSync(LOGS, { recursive: true });
  writeFileSync(join(LOGS, `${name}.log`), m.stderr());
}
/**
 * `--traffic`: what the members publish to NATS, by kind, per message read over the measured span
 * (core subscriptions on the subjects they publish to; their copies add to NATS's out-messages).
 */
const TRAFFIC = values.traffic;
const FLOE = PROFILE === undefined ? undefined : [process.execPath, "--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${PROFILE}`, join(import.meta.dir, "..", "cli.ts")];
/**
 * Member i's cgroup (`--cpu-quota`), created on first use. The members' and NATS's groups weigh
 * 4× a plain process (cpu.shares 4096) so that other work on the machine does not take the quota
 * from them; NATS has no limit.
 */
const SHARES = 4096;
const quotas: CpuQuota[] = [];
function confine(i: number, m: DaemonProc): void {
  if (QUOTA === undefined) return;
  quotas[i] ??= CpuQuota.create(`floe-m${i}`, QUOTA, SHARES);
  quotas[i]!.add(m.proc.pid);
}
const confineAll = (g: Group) => g.members.forEach((m, i) => confine(i, m));
const MEMBERS = values.members!.split(",").filter((x) => x).map(Number);
const KILL_N = Number(values["kill-members"]);
const M = Number(values.messages);
const D = Number(values.devices);
const TIMEOUT = Math.max(120_000, M * 2);

// `--nats-cluster`: a 3-node NATS cluster (routes between the servers; every member and connector
// is given all three URLs) instead of one server.
// One server is started with a monitoring port: its /varz message counts say what it did per message read.
const MONITOR = values["nats-cluster"] ? undefined : await freePort();
const nats = values["nats-cluster"] ? await NatsCluster.start(3) : await NatsServer.start(["-m", String(MONITOR)]);
/** The server's counts of messages in (publishes: acks, pulls, KV writes, …) and out (deliveries), or undefined. */
async function varz(): Promise<{ in: number; out: number } | undefined> {
  if (MONITOR === undefined) return undefined;
  const v = (await (await fetch(`http://127.0.0.1:${MONITOR}/varz`)).json()) as { in_msgs: number; out_msgs: number };
  return { in: v.in_msgs, out: v.out_msgs };
}
/** Messages the members published, by kind (`--traffic`): acknowledgements by their body, JetStream API calls, KV writes, sink output. */
const traffic = new Map<string, number>();
const tc = TRAFFIC ? await connect({ servers: nats.url.split(",") }) : undefined;
if (tc) {
  const count = (kind: string): void => void traffic.set(kind, (traffic.get(kind) ?? 0) + 1);
  const body = (d: Uint8Array) => new TextDecoder().decode(d.subarray(0, 4));
  tc.subscribe("$JS.ACK.>", { callback: (_e, m) => count(`ack ${body(m.data)}`) });
  tc.subscribe("$JS.API.>", { callback: (_e, m) => count(m.subject.startsWith("$JS.API.CONSUMER.MSG.NEXT.") ? "pull" : `api ${m.subject.split(".").slice(2, 4).join(".")}`) });
  tc.subscribe("$KV.>", { callback: (_e, m) => count(`kv ${m.subject.split(".")[1]}`) });
  tc.subscribe("out.>", { callback: () => count("sink") });
}
console.log(`nats: ${values["nats-cluster"] ? "a 3-node cluster" : "one server"} (${nats.url})`);
const natsGroup = QUOTA === undefined ? undefined : CpuQuota.create("floe-nats", Infinity, SHARES);
if (natsGroup) for (const pid of "servers" in nats ? nats.servers.map((x) => x.pid) : [nats.pid]) if (pid !== undefined) natsGroup.add(pid);
const nc = await connect({ servers: nats.url.split(",") });
const jsm = await jetstreamManager(nc);
await createStreams(jsm);
const data = dataSet(D, M);
const perPartition = Array.from({ length: 12 }, (_, p) => data.filter((m) => m.p === p).length);
console.log(`data: ${D} devices, ${M} messages (+12 ticks), 12 partitions; ${cpus().length} cores${QUOTA === undefined ? "" : `; each member held to ${QUOTA} of a core (cgroup v1 cpu), NATS and the publisher unconstrained; members and NATS at cpu.shares ${SHARES}`}`);

/**
 * Messages of IN the durables of `tag` have not delivered yet (`ahead`: what the rate counts, as a
 * reader pulls its next batch only once the rule took the last) and not acknowledged yet (`rem`:
 * acknowledgements wait for checkpoints whose results are delivered, so they come in steps).
 */
async function remaining(tag: string): Promise<{ ahead: number; rem: number }> {
  let ahead = 0;
  let rem = 0;
  for (let p = 0; p < 12; p++) {
    // A durable its run has not created yet has everything of its partition ahead of it.
    const i = await jsm.consumers.info("IN", `${tag}_${p}`).catch(() => undefined);
    ahead += i ? i.num_pending : perPartition[p]!;
    rem += i ? i.num_pending + i.num_ack_pending : perPartition[p]!;
  }
  return { ahead, rem };
}

async function stopAll(g: Group): Promise<void> {
  for (const m of g.members) await m.stop(PROFILE === undefined ? "SIGKILL" : "SIGTERM").catch(() => undefined);
}

const results: { members: number; seconds: number; rate: number; exact: boolean }[] = [];
const summary: Record<string, unknown> = { devices: D, messages: M, partitions: 12 };
try {
  // The replay runs while the data set is published (both are needed by every part below).
  const half = Math.floor(data.length / 2);
  const t0 = performance.now();
  const [want, pubRate] = await Promise.all([
    replay(data).then((rows) => (console.log(`floe run --replay: ${rows.length} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`), rows)),
    MEMBERS.length > 0 ? publish(nc, data) : publish(nc, data.slice(0, half)),
  ]);
  console.log(`published ${MEMBERS.length > 0 ? data.length : half} messages at ${Math.round(pubRate)} msg/s`);

  for (const n of MEMBERS) {
    const tag = `t${n}`;
    const g = await startGroup(nats, tag, n, false, FLOE);
    confineAll(g);
    try {
      if (WARMUP > 0) {
        // A rule of its own id: what the warm-up leaves in the group (a checkpoint a member uploaded
        // while the deletion reached it) is not the measured rule's.
        await createRule(g, nats, `w${n}`, "w");
        await until(async () => (await remaining(`w${n}`)).ahead <= data.length * (1 - WARMUP), TIMEOUT, "the warm-up");
        for (const [path, what] of [["/rules/w", "rule"], ["/streams/s", "stream"]] as const) {
          const r = await g.members[0]!.call("DELETE", path);
          if (r.status !== 200) throw new Error(`deleting the warm-up ${what}: ${r.text}`);
        }
      }
      // A fresh OUT: this group's default message ids are those of the groups before it (test/helpers/js-scenario.ts).
      await resetOut(jsm);
      const throttledBefore = quotas.slice(0, n).map((q) => q.throttled().throttledPeriods);
      const t = performance.now();
      await createRule(g, nats, tag);
      // From here every partition runs. The rate is taken from 30 % to 90 % of what is left then:
      // past the partitions' start (slow under a quota) and each member's JIT warm-up, before the tail.
      const left = (await remaining(tag)).ahead;
      const natsPids: (number | undefined)[] = "servers" in nats ? nats.servers.map((x) => x.pid) : [nats.pid];
      const cpu = () => ({ members: g.members.reduce((t, m) => t + cpuSeconds(m.proc.pid), 0), nats: natsPids.reduce<number>((t, pid) => t + cpuSeconds(pid), 0) });
      const samples: { t: number; ahead: number; cpu: { members: number; nats: number }; varz: { in: number; out: number } | undefined; traffic: Map<string, number> }[] = [];
      await until(async () => {
        const { ahead, rem } = await remaining(tag);
        samples.push({ t: performance.now(), ahead, cpu: cpu(), varz: await varz(), traffic: new Map(traffic) });
        return rem === 0 && (await drained(jsm, tag));
      }, TIMEOUT, `group of ${n} reading everything`);
      const done = performance.now();
      const a = samples.find((x) => x.ahead <= left * 0.7)!;
      const b = samples.find((x) => x.ahead <= left * 0.1)!;
      const wall = (b.t - a.t) / 1000;
      const msgs = a.ahead - b.ahead;
      const perMsg = a.varz && b.varz ? ` (${((b.cpu.nats - a.cpu.nats) / msgs * 1e6).toFixed(1)} µs/msg; per message read ${((b.varz.in - a.varz.in) / msgs).toFixed(3)} in, ${((b.varz.out - a.varz.out) / msgs).toFixed(3)} out)` : "";
      const use = `members ${((b.cpu.members - a.cpu.members) / wall).toFixed(2)} cores (${Math.round(((b.cpu.members - a.cpu.members) / msgs) * 1e6)} µs/msg), NATS ${((b.cpu.nats - a.cpu.nats) / wall).toFixed(2)} cores${perMsg}`;
      if (TRAFFIC) console.log(`traffic per message read (${tag}): ${[...b.traffic].map(([k, v]) => `${k} ${((v - (a.traffic.get(k) ?? 0)) / msgs).toPrecision(3)}`).join(", ")}`);
      const seconds = (done - t) / 1000;
      const rate = msgs / wall;
      let got = await stored(nc, tag);
      await until(async () => (got = await stored(nc, tag)).filter((r) => r.deviceId !== "tick").length >= want.length, 10_000).catch(() => undefined);
      const rows = compare(got, want);
      results.push({ members: n, seconds, rate, exact: rows.exact });
      const throttled = quotas.slice(0, n).map((q, i) => q.throttled().throttledPeriods - throttledBefore[i]!);
      for (const m of g.members) for (const l of m.stderr().split("\n")) if (/from the checkpoint|rewound|restarted from/.test(l)) console.log(l);
      console.log(
        `members ${n}: ${Math.round(rate)} msg/s (×${(rate / results[0]!.rate).toFixed(2)} of ${results[0]!.members}) from 30 % to 90 % of what was left once every partition ran (${msgs} messages in ${wall.toFixed(2)} s; all ${data.length} in ${seconds.toFixed(2)} s from the rule's creation; CPU ${use}); exact: ${rows.exact ? "yes" : "no"} (rows ${rows.rows}/${rows.expected}); load ${loadavg()[0]!.toFixed(1)}${QUOTA === undefined ? "" : `; periods throttled by the quota ${throttled.join("/")}`}`,
      );
    } finally {
      await stopAll(g);
      g.members.forEach((m, i) => saveLog(`${tag}-m${i}`, m));
    }
  }

  if (KILL_N >= 2) {
    const tag = "k";
    const g = await startGroup(nats, "kill", KILL_N, true, FLOE);
    confineAll(g);
    try {
      await resetOut(jsm);
      const pubs = countPublishes(nc, tag);
      // A fresh durable per partition reads IN from its start. Without the throughput part only
      // the first half is in IN (published above) and the rest is published while the rule runs;
      // with it everything is, and the kill lands mid-read.
      await createRule(g, nats, tag);
      const rest = MEMBERS.length === 0 ? publish(nc, data.slice(half)) : Promise.resolve(0);
      const victim = KILL_N - 1;
      const lost = new Set((JSON.parse((await g.members[victim]!.call("GET", "/cluster")).text) as { partitionedRules: { r?: number[] } }).partitionedRules.r ?? []);
      // Killed a third into its own share, so that its partitions are mid-stream.
      const share = (data.length * lost.size) / 12;
      const own = async () => (JSON.parse((await g.members[victim]!.call("GET", `/v2/rules/r/status?instance=m${victim}`)).text) as Record<string, number>).source_s_0_records_in_total ?? 0;
      await until(async () => (await own()) >= share / 3, TIMEOUT, "a third of the victim's share taken");
      // The first output of a partition the victim ran sent by its next owner (a newer epoch in
      // header Floe-Epoch, not a publish of the victim's still in flight): its failover is over.
      const kv = await new Kvm(nc).open("floe_kill_state");
      const epochs = new Map<number, number>();
      for (const p of lost) epochs.set(p, (JSON.parse(new TextDecoder().decode((await kv.get(`m.${Buffer.from("r").toString("base64url")}.${p}`))!.value)) as { epoch: number }).epoch);
      let resumedAt = 0;
      let killAt = Infinity;
      const watch = nc.subscribe(`out.${tag}`, {
        callback: (_e, m) => {
          if (resumedAt || performance.now() < killAt) return;
          const d = (m.json() as { deviceId?: string }).deviceId ?? "";
          const p = Number(d.slice(1)) % 12;
          if (/^d\d+$/.test(d) && lost.has(p) && Number(m.headers?.get("Floe-Epoch")) > epochs.get(p)!) resumedAt = performance.now();
        },
      });
      killAt = performance.now();
      g.members[victim]!.proc.kill("SIGKILL");
      const killedAt = await recordsIn(g);
      console.log(`kill -9 member m${victim} (partitions ${[...lost].join(",")}) at ${new Date(performance.timeOrigin + killAt).toISOString()}, after about ${killedAt} messages taken`);
      await rest;
      await takenOver(g.members.filter((_, i) => i !== victim));
      saveLog(`kill-m${victim}-killed`, g.members[victim]!);
      g.members[victim] = await startFloe(g.members[victim]!.dir, g.envs[victim]!);
      confine(victim, g.members[victim]!);
      console.log(`m${victim} restarted`);
      await until(() => drained(jsm, tag), TIMEOUT, "every partition read and acknowledged");
      let rows = await stored(nc, tag);
      await until(async () => (rows = await stored(nc, tag)).filter((r) => r.deviceId !== "tick").length >= want.length, 10_000).catch(() => undefined);
      await Bun.sleep(500);
      const c = compare(rows, want);
      const suppressed = pubs.count() - rows.length;
      pubs.stop();
      watch.unsubscribe();
      const lease = 2000;
      const failover = resumedAt ? (resumedAt - killAt) / 1000 : NaN;
      console.log(`failover: ${failover.toFixed(2)} s from the kill to the first output of m${victim}'s partitions (goal ≤ leaseTimeout ${lease / 1000} s + 2 s: ${failover <= lease / 1000 + 2 ? "met" : "not met"})`);
      summary.failoverSeconds = failover;
      console.log(`exact: ${c.exact ? "yes" : "no"}`);
      console.log(`rows ${c.rows} (replay ${c.expected}); duplicates suppressed ${suppressed}; lost ${c.lost}; wrong ${c.wrong}; extra ${c.extra}; duplicate rows stored ${c.duplicateKeys}`);
      if (!c.exact) console.log(`differences (partition → window end → rows): ${JSON.stringify(c.where)}; e.g. (expected, got) ${JSON.stringify(c.examples)}`);
      for (const m of g.members) console.log(m.stderr().split("\n").filter((l) => /partition \d+ started|rewound|restarted|cannot|live members/.test(l)).join("\n"));
      Object.assign(summary, { exact: c.exact, rows: c.rows, expected: c.expected, duplicatesSuppressed: suppressed, lost: c.lost, wrong: c.wrong, extra: c.extra });
    } finally {
      await stopAll(g);
      g.members.forEach((m, i) => saveLog(`kill-m${i}`, m));
    }
  }
} finally {
  await tc?.close();
  await nc.close();
  await nats.stop();
  for (const q of quotas) q.remove();
  natsGroup?.remove();
}
if (results.length > 1) {
  const base = results[0]!;
  const where = QUOTA === undefined ? `${cpus().length} cores shared by the members, NATS and the publisher` : `each member ${QUOTA} of a core`;
  console.log(`scaling: ${results.map((r) => `${r.members} → ×${(r.rate / base.rate).toFixed(2)}${r.exact ? "" : " (not exact)"}`).join(", ")} (${where})`);
  const last = results.at(-1)!;
  if (QUOTA !== undefined) console.log(`ratio ${last.members}:${base.members} = ${(last.rate / base.rate).toFixed(2)} (goal ≥ 2.4 at 0.25 for 3:1)`);
}
if (values.json) writeFileSync(values.json, JSON.stringify({ ...summary, results }, null, 2));
