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
 *    published) data set; time from the rule's creation until every partition's durable has
 *    delivered and acknowledged everything.
 * 2. Exactness: `--kill-members` members; half the data is published, the rule created, the rest
 *    published while it runs; once the group has taken ⅓ of it one member is killed with -9, and
 *    restarted after the others took its partitions over. The output stored in OUT is compared
 *    row for row with one `floe run --replay` of the same data: `exact: yes|no`, rows, duplicates
 *    suppressed (sink publishes the stream dropped as already stored), lost, wrong.
 *
 *   node_modules/.bin/bun bench/cluster.ts [--devices 1000] [--messages 500000] [--members 1,2,3] [--kill-members 3] [--nats-cluster] [--json FILE]
 *
 * One process publishes and all members share the machine's cores with NATS: on 2 cores the
 * scaling ratio cannot reach the member count (see the printed load).
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { NatsCluster, NatsServer } from "../test/helpers/nats.ts";
import { compare, connect, countPublishes, createRule, createStreams, dataSet, drained, jetstreamManager, publish, recordsIn, replay, startGroup, stored, takenOver, until, type Group } from "../test/helpers/js-scenario.ts";
import { startFloe } from "../test/server/daemon.ts";

const { values } = parseArgs({
  options: {
    members: { type: "string", default: "1,2,3" },
    "kill-members": { type: "string", default: "3" },
    messages: { type: "string", default: "500000" },
    devices: { type: "string", default: "1000" },
    json: { type: "string" },
    "nats-cluster": { type: "boolean", default: false },
  },
});
const MEMBERS = values.members!.split(",").filter((x) => x).map(Number);
const KILL_N = Number(values["kill-members"]);
const M = Number(values.messages);
const D = Number(values.devices);
const TIMEOUT = Math.max(120_000, M * 2);

// `--nats-cluster`: a 3-node NATS cluster (routes between the servers; every member and connector
// is given all three URLs) instead of one server.
const nats = values["nats-cluster"] ? await NatsCluster.start(3) : await NatsServer.start();
console.log(`nats: ${values["nats-cluster"] ? "a 3-node cluster" : "one server"} (${nats.url})`);
const nc = await connect({ servers: nats.url.split(",") });
const jsm = await jetstreamManager(nc);
await createStreams(jsm);
const data = dataSet(D, M);
console.log(`data: ${D} devices, ${M} messages (+12 ticks), 12 partitions; ${cpus().length} cores`);

async function stopAll(g: Group): Promise<void> {
  for (const m of g.members) await m.stop("SIGKILL").catch(() => undefined);
}

const results: { members: number; seconds: number; rate: number }[] = [];
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
    const g = await startGroup(nats, tag, n, false);
    try {
      const t = performance.now();
      await createRule(g, nats, tag);
      await until(() => drained(jsm, tag), TIMEOUT, `group of ${n} reading everything`);
      const seconds = (performance.now() - t) / 1000;
      const rate = data.length / seconds;
      results.push({ members: n, seconds, rate });
      const rows = compare(await stored(nc, tag), want);
      console.log(
        `members ${n}: ${data.length} messages in ${seconds.toFixed(2)} s = ${Math.round(rate)} msg/s (×${(rate / results[0]!.rate).toFixed(2)} of ${results[0]!.members}); rows ${rows.rows}/${rows.expected}; load ${loadavg()[0]!.toFixed(1)}`,
      );
    } finally {
      await stopAll(g);
    }
  }

  if (KILL_N >= 2) {
    const tag = "k";
    const g = await startGroup(nats, "kill", KILL_N, true);
    try {
      const pubs = countPublishes(nc, tag);
      // A fresh durable per partition reads IN from its start. Without the throughput part only
      // the first half is in IN (published above) and the rest is published while the rule runs;
      // with it everything is, and the kill lands mid-read.
      await createRule(g, nats, tag);
      const rest = MEMBERS.length === 0 ? publish(nc, data.slice(half)) : Promise.resolve(0);
      await until(async () => (await recordsIn(g)) >= data.length / 3, TIMEOUT, "a third of the input taken");
      const victim = KILL_N - 1;
      g.members[victim]!.proc.kill("SIGKILL");
      const killedAt = await recordsIn(g);
      console.log(`kill -9 member m${victim} after about ${killedAt} messages taken`);
      await rest;
      await takenOver(g.members.filter((_, i) => i !== victim));
      g.members[victim] = await startFloe(g.members[victim]!.dir, g.envs[victim]!);
      console.log(`m${victim} restarted`);
      await until(() => drained(jsm, tag), TIMEOUT, "every partition read and acknowledged");
      let rows = await stored(nc, tag);
      await until(async () => (rows = await stored(nc, tag)).filter((r) => r.deviceId !== "tick").length >= want.length, 10_000).catch(() => undefined);
      await Bun.sleep(500);
      const c = compare(rows, want);
      const suppressed = pubs.count() - rows.length;
      pubs.stop();
      console.log(`exact: ${c.exact ? "yes" : "no"}`);
      console.log(`rows ${c.rows} (replay ${c.expected}); duplicates suppressed ${suppressed}; lost ${c.lost}; wrong ${c.wrong}; extra ${c.extra}; duplicate rows stored ${c.duplicateKeys}`);
      if (!c.exact) console.log(`differences (partition → window end → rows): ${JSON.stringify(c.where)}; e.g. (expected, got) ${JSON.stringify(c.examples)}`);
      for (const m of g.members) console.log(m.stderr().split("\n").filter((l) => /partition \d+ started|rewound|restarted|cannot/.test(l)).join("\n"));
      Object.assign(summary, { exact: c.exact, rows: c.rows, expected: c.expected, duplicatesSuppressed: suppressed, lost: c.lost, wrong: c.wrong, extra: c.extra });
    } finally {
      await stopAll(g);
    }
  }
} finally {
  await nc.close();
  await nats.stop();
}
if (results.length > 1) {
  const base = results[0]!;
  console.log(`scaling: ${results.map((r) => `${r.members} → ×${(r.rate / base.rate).toFixed(2)}`).join(", ")} (${cpus().length} cores shared by the members, NATS and the publisher)`);
}
if (values.json) writeFileSync(values.json, JSON.stringify({ ...summary, results }, null, 2));
