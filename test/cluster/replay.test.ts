/**
 * Replays into the group's definitions bucket over a real NATS server: a plain NATS client that
 * can write the bucket (but has no group secret) captures entries the members signed and puts
 * them back later — a deleted rule re-created, a rule rolled back to an older version. Each entry
 * is bound to the revision it replaced, so a replayed one is refused by every member, logged and
 * counted, live and at start-up; the members' own create/update/delete sequence still applies
 * everywhere. A bucket left by an older floe (entries signed without that revision) is refused
 * with a message saying what to do, and the member keeps serving.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Kvm, type KV } from "@nats-io/kv";
import { EntrySigner } from "../../lib/cluster/auth.ts";
import { startFloe, tempHome, type DaemonProc } from "../server/daemon.ts";
import { freePort } from "../helpers/mosquitto.ts";
import { GROUP_SECRET, NatsServer } from "../helpers/nats.ts";
import { waitFor } from "../helpers/wait.ts";

let nats: NatsServer;
let nc: NatsConnection;
let kv: KV;
const floes: DaemonProc[] = [];

const env = (instance: string, group = "replay", extra: Record<string, string> = {}): Record<string, string> => ({
  KUIPER__CLUSTER__NATS: nats.url,
  KUIPER__CLUSTER__GROUP: group,
  KUIPER__CLUSTER__INSTANCE: instance,
  KUIPER__CLUSTER__SECRET: GROUP_SECRET,
  KUIPER__CLUSTER__HEARTBEATINTERVAL: "500ms",
  KUIPER__CLUSTER__LEASETIMEOUT: "3s",
  ...extra,
});

const bucketKey = (ns: string, id: string) => `d.${ns}.${Buffer.from(id).toString("base64url")}`;
const refusedCount = async (d: DaemonProc) => (JSON.parse((await d.call("GET", "/cluster")).text) as { refusedEntries: { count: number } }).refusedEntries.count;
const ruleIds = async (d: DaemonProc) => (JSON.parse((await d.call("GET", "/rules")).text) as { id: string }[]).map((r) => r.id).sort();
/** The rule's actions as member `d` holds it, or undefined when it has no such rule. */
async function actions(d: DaemonProc, id: string): Promise<unknown> {
  const r = await d.call("GET", `/rules/${id}`);
  return r.status === 200 ? (JSON.parse(r.text) as { actions: unknown }).actions : undefined;
}
/** The bucket's current entry of `key`, as a NATS client reads it (what an intruder captures). */
async function capture(key: string): Promise<Uint8Array> {
  const e = await kv.get(key);
  if (!e || e.operation !== "PUT") throw new Error(`no entry stored under ${key}`);
  return e.value;
}
const rule = (id: string, action: string) => ({ id, sql: "SELECT * FROM sim", actions: [{ [action]: {} }] });

beforeAll(async () => {
  nats = await NatsServer.start();
  nc = await connect({ servers: nats.url });
  // /metrics on a's REST port (prometheusPort = restPort).
  const port = String(await freePort());
  const metrics = { KUIPER__BASIC__RESTPORT: port, KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: port };
  floes.push(await startFloe(tempHome(), env("a", "replay", metrics)), await startFloe(tempHome(), env("b")));
  kv = await new Kvm(nc).open("floe_replay");
  const [a, b] = floes as [DaemonProc, DaemonProc];
  expect((await a.call("POST", "/streams", { sql: 'CREATE STREAM sim () WITH (TYPE="memory", DATASOURCE="sim")' })).status).toBe(201);
  await waitFor(async () => (await b.call("GET", "/streams/sim")).status === 200, "the stream on b");
}, 30_000);

afterAll(async () => {
  for (const f of floes) await f.stop("SIGKILL");
  await nc?.close();
  await nats?.stop();
});

test("the definitions bucket keeps five revisions per key", async () => {
  expect((await kv.status()).history).toBe(5);
});

test("a deleted rule put back from a captured signed entry is refused by every member and does not run", async () => {
  const [a, b] = floes as [DaemonProc, DaemonProc];
  expect((await a.call("POST", "/rules", rule("gone", "nop"))).status).toBe(201);
  await waitFor(async () => (await ruleIds(b)).includes("gone"), "rule gone on b");
  const old = await capture(bucketKey("rule", "gone"));
  expect((await b.call("DELETE", "/rules/gone")).status).toBe(200);
  await waitFor(async () => !(await ruleIds(a)).includes("gone"), "rule gone deleted on a");
  const before = await Promise.all(floes.map(refusedCount));

  await kv.put(bucketKey("rule", "gone"), old);

  for (const [i, d] of floes.entries()) await waitFor(async () => (await refusedCount(d)) === before[i]! + 1, "the replay refused");
  for (const d of floes) {
    expect(await ruleIds(d)).toEqual([]);
    expect((await d.call("GET", "/rules/gone/status")).status).not.toBe(200);
    expect(d.stderr()).toContain(`cluster: refused the group entry ${bucketKey("rule", "gone")}: it replaces revision 0, but the key's previous revision is `);
  }
}, 30_000);

test("a rule rolled back to an older signed version is refused; every member keeps the newer one", async () => {
  const [a, b] = floes as [DaemonProc, DaemonProc];
  expect((await a.call("POST", "/rules", rule("r", "nop"))).status).toBe(201);
  await waitFor(async () => (await ruleIds(b)).includes("r"), "rule r on b");
  const v1 = await capture(bucketKey("rule", "r"));
  expect((await b.call("PUT", "/rules/r", rule("r", "log"))).status).toBe(200);
  await waitFor(async () => JSON.stringify(await actions(a, "r")) === JSON.stringify([{ log: {} }]), "r's second version on a");
  const before = await Promise.all(floes.map(refusedCount));

  await kv.put(bucketKey("rule", "r"), v1);

  for (const [i, d] of floes.entries()) await waitFor(async () => (await refusedCount(d)) === before[i]! + 1, "the rollback refused");
  for (const d of floes) {
    expect(await actions(d, "r")).toEqual([{ log: {} }]);
    expect(d.stderr()).toMatch(/cluster: refused the group entry d\.rule\.cg: it replaces revision \d+, but the key's previous revision is \d+: a replayed or rolled-back entry/);
  }
  expect(JSON.parse((await a.call("GET", "/cluster")).text).refusedEntries.last.key).toBe(bucketKey("rule", "r"));
  expect((await a.call("GET", "/metrics")).text).toMatch(new RegExp(`^floe_cluster_entries_refused_total ${before[0]! + 1}$`, "m"));
}, 30_000);

test("a member starting with replayed entries in the bucket takes the last valid ones and stores them again", async () => {
  const [, b] = floes as [DaemonProc, DaemonProc];
  // b holds r's newer version: restarted, it stores it again, signed after the replayed entry.
  await b.stop("SIGTERM");
  floes[1] = await startFloe(b.dir, env("b"));
  const log = floes[1].stderr();
  expect(log).toContain("cluster: stored rule r in the group again, signed, from this member's copy");
  // The replayed "gone" follows its delete: refused, and the delete is stored again on top.
  expect(log).toContain(`cluster: refused the group entry ${bucketKey("rule", "gone")}: it replaces revision 0, but the key's previous revision is `);
  expect(log).toContain("cluster: stored the delete of rule gone in the group again, signed");
  const c = await startFloe(tempHome(), env("c"));
  floes.push(c);
  expect(await ruleIds(c)).toEqual(["r"]);
  expect(await actions(c, "r")).toEqual([{ log: {} }]);
  expect(await refusedCount(c)).toBe(0);
  for (const d of floes) expect(await actions(d, "r")).toEqual([{ log: {} }]);
}, 30_000);

test("a member that missed an update while it was away does not roll the group back to its older copy", async () => {
  const [a, b] = floes as [DaemonProc, DaemonProc];
  expect((await a.call("POST", "/rules", rule("st", "nop"))).status).toBe(201);
  for (const d of floes) await waitFor(async () => (await ruleIds(d)).includes("st"), "rule st everywhere");
  const v1 = await capture(bucketKey("rule", "st"));
  await b.stop("SIGTERM");
  expect((await a.call("PUT", "/rules/st", rule("st", "log"))).status).toBe(200);
  await kv.put(bucketKey("rule", "st"), v1);
  await waitFor(async () => JSON.parse((await a.call("GET", "/cluster")).text).refusedEntries.last?.key === bucketKey("rule", "st"), "the replay refused on a");
  // b's copy is the first version, as is the replayed entry on top of the bucket: b takes the second.
  floes[1] = await startFloe(b.dir, env("b"));
  expect(floes[1].stderr()).toContain("cluster: stored rule st in the group again, signed, as its last valid entry held it");
  for (const d of floes) await waitFor(async () => JSON.stringify(await actions(d, "st")) === JSON.stringify([{ log: {} }]), "st's second version everywhere");
}, 30_000);

test("members' own creates, updates and deletes still apply everywhere", async () => {
  const before = await Promise.all(floes.map(refusedCount));
  const [a, b, c] = floes as [DaemonProc, DaemonProc, DaemonProc];
  const everywhere = async (want: unknown, what: string) => {
    for (const d of floes) await waitFor(async () => JSON.stringify(await actions(d, "seq")) === JSON.stringify(want), `${what} on every member`);
  };
  expect((await a.call("POST", "/rules", rule("seq", "nop"))).status).toBe(201);
  await everywhere([{ nop: {} }], "the create");
  expect((await b.call("PUT", "/rules/seq", rule("seq", "log"))).status).toBe(200);
  await everywhere([{ log: {} }], "the update");
  expect((await c.call("DELETE", "/rules/seq")).status).toBe(200);
  await everywhere(undefined, "the delete");
  expect((await b.call("POST", "/rules", rule("seq", "nop"))).status).toBe(201);
  await everywhere([{ nop: {} }], "the create after the delete");
  // Two members writing the same key at once: the compare-and-set makes one write after the other.
  const [ra, rb] = await Promise.all([a.call("PUT", "/rules/seq", rule("seq", "log")), c.call("PUT", "/rules/seq", rule("seq", "nop"))]);
  expect([ra.status, rb.status]).toEqual([200, 200]);
  await waitFor(async () => new Set(await Promise.all(floes.map(async (d) => JSON.stringify(await actions(d, "seq"))))).size === 1, "every member on the same version");
  expect(await Promise.all(floes.map(refusedCount))).toEqual(before);
}, 30_000);

test("a bucket of an older floe (entries signed without the revision they replace) is refused with what to do; the member serves", async () => {
  const older = await new Kvm(nc).create("floe_older", { history: 1 });
  const signer = new EntrySigner(new TextEncoder().encode(GROUP_SECRET));
  const key = bucketKey("stream", "legacy");
  const v = JSON.stringify({ statement: 'CREATE STREAM legacy () WITH (TYPE="memory", DATASOURCE="legacy")' });
  await older.put(key, JSON.stringify({ v, o: "old", s: 1, h: signer.sign(key, JSON.stringify([v, "old", 1])) }));
  await older.create("meta.seeded", "old");
  const d = await startFloe(tempHome(), env("x", "older"));
  floes.push(d);
  expect(d.stderr()).toContain("cluster: the group's bucket floe_older holds 1 definition(s) written by an older floe");
  expect(d.stderr()).toContain("nats kv del floe_older");
  expect(d.stderr()).toContain(`cluster: refused the group entry ${key}: an entry of an older floe`);
  expect(JSON.parse((await d.call("GET", "/streams")).text)).toEqual([]);
  expect(await refusedCount(d)).toBe(1);
  // The bucket now keeps five revisions per key: re-applying the definition over REST stores it anew.
  expect((await older.status()).history).toBe(5);
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM legacy () WITH (TYPE="memory", DATASOURCE="legacy")' })).status).toBe(201);
  const e = JSON.parse(new TextDecoder().decode((await older.get(key))!.value)) as { p: number };
  expect(e.p).toBeGreaterThan(0);
}, 30_000);
