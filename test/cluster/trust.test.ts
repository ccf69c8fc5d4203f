/**
 * The group's trust boundary over a real NATS server that requires a user and password: a member
 * connects with the `cluster:` credentials and refuses to start without them or without a group
 * secret; a plain NATS client that can write the group's bucket (it has the NATS credentials but not
 * the secret) injects, tampers with, moves and deletes definition entries, and none of it is
 * applied: each is refused, logged and counted in GET /cluster and /metrics, live and at start-up.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, nkeys, type NatsConnection } from "@nats-io/transport-node";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { Kvm, type KV } from "@nats-io/kv";
import { EntrySigner } from "../../lib/cluster/auth.ts";
import { startFloe, tempHome, type DaemonProc } from "../server/daemon.ts";
import { freePort } from "../helpers/mosquitto.ts";
import { GROUP_SECRET, NatsServer } from "../helpers/nats.ts";
import { waitFor } from "../helpers/runtime.ts";

const USER = "floe";
const PASS = "nats-password-for-the-group";
let nats: NatsServer;
let nc: NatsConnection;
let kv: KV;
const floes: DaemonProc[] = [];

const env = (instance: string, extra: Record<string, string> = {}): Record<string, string> => ({
  KUIPER__CLUSTER__NATS: nats.url,
  KUIPER__CLUSTER__GROUP: "trust",
  KUIPER__CLUSTER__INSTANCE: instance,
  KUIPER__CLUSTER__USERNAME: USER,
  KUIPER__CLUSTER__PASSWORD: PASS,
  KUIPER__CLUSTER__HEARTBEATINTERVAL: "500ms",
  KUIPER__CLUSTER__LEASETIMEOUT: "3s",
  ...extra,
});

const bucketKey = (ns: string, id: string) => `d.${ns}.${Buffer.from(id).toString("base64url")}`;
const envelope = (v: string | null, o = "intruder", s = 1) => ({ v, o, s });

interface Refusals {
  count: number;
  last?: { key: string; reason: string };
}
async function refusals(d: DaemonProc): Promise<Refusals> {
  return (JSON.parse((await d.call("GET", "/cluster")).text) as { refusedEntries: Refusals }).refusedEntries;
}
async function metric(d: DaemonProc): Promise<number> {
  const m = /^floe_cluster_entries_refused_total (\d+)$/m.exec((await d.call("GET", "/metrics")).text);
  return m ? Number(m[1]) : -1;
}
const ruleIds = async (d: DaemonProc) => (JSON.parse((await d.call("GET", "/rules")).text) as { id: string }[]).map((r) => r.id);

beforeAll(async () => {
  nats = await NatsServer.start(["--user", USER, "--pass", PASS]);
  nc = await connect({ servers: nats.url, user: USER, pass: PASS });
  // /metrics on the REST port (prometheusPort = restPort).
  const port = String(await freePort());
  floes.push(await startFloe(tempHome(), env("a", { KUIPER__CLUSTER__SECRET: GROUP_SECRET, KUIPER__BASIC__RESTPORT: port, KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: port })));
  kv = await new Kvm(nc).open("floe_trust");
}, 30_000);

afterAll(async () => {
  for (const f of floes) await f.stop("SIGKILL");
  await nc?.close();
  await nats?.stop();
});

test("a member without the NATS credentials or without a group secret does not start, and says why", async () => {
  await expect(startFloe(tempHome(), { ...env("x", { KUIPER__CLUSTER__SECRET: GROUP_SECRET }), KUIPER__CLUSTER__PASSWORD: "wrong" })).rejects.toThrow(/cluster: cannot connect to NATS .*[Aa]uthorization/);
  await expect(startFloe(tempHome(), env("y"))).rejects.toThrow("cluster: a group needs cluster.secret or cluster.secretFile: members apply only definitions signed with it");
  await expect(startFloe(tempHome(), env("y", { KUIPER__CLUSTER__SECRET: "short" }))).rejects.toThrow("cluster: the group secret is 5 bytes long, shorter than 16");
});

test("a member connects with a token or an nkey seed (from a file) as the NATS server asks", async () => {
  const user = nkeys.createUser();
  const dir = mkdtempSync(join(tmpdir(), "floe-nkey-"));
  writeFileSync(join(dir, "nats.conf"), `authorization { users = [ { nkey: "${user.getPublicKey()}" } ] }\n`);
  const servers = [await NatsServer.start(["--auth", "a-token-for-the-group"]), await NatsServer.start(["-c", join(dir, "nats.conf")])];
  const home = tempHome({ "member.nk": new TextDecoder().decode(user.getSeed()) });
  const members: DaemonProc[] = [];
  try {
    const base = { KUIPER__CLUSTER__GROUP: "creds", KUIPER__CLUSTER__SECRET: GROUP_SECRET };
    members.push(await startFloe(tempHome(), { ...base, KUIPER__CLUSTER__NATS: servers[0]!.url, KUIPER__CLUSTER__TOKEN: "a-token-for-the-group" }));
    members.push(await startFloe(home, { ...base, KUIPER__CLUSTER__NATS: servers[1]!.url, KUIPER__CLUSTER__NKEYSEEDFILE: "member.nk" }));
    for (const m of members) expect(JSON.parse((await m.call("GET", "/cluster")).text).connected).toBe(true);
    await expect(startFloe(tempHome(), { ...base, KUIPER__CLUSTER__NATS: servers[1]!.url, KUIPER__CLUSTER__NKEYSEED: new TextDecoder().decode(nkeys.createUser().getSeed()) })).rejects.toThrow(/cluster: cannot connect to NATS/);
  } finally {
    for (const m of members) await m.stop("SIGKILL");
    for (const x of servers) await x.stop();
  }
}, 30_000);

test("a second member with the secret from a key file joins and shares the definitions", async () => {
  const dir = tempHome();
  writeFileSync(join(dir, "etc", "group.key"), `${GROUP_SECRET}\n`);
  floes.push(await startFloe(dir, env("b", { KUIPER__CLUSTER__SECRETFILE: "group.key" })));
  const [a, b] = floes as [DaemonProc, DaemonProc];
  const created = await a.call("POST", "/streams", { sql: 'CREATE STREAM sim () WITH (TYPE="memory", DATASOURCE="sim")' });
  expect([created.status, created.text]).toEqual([201, "Stream sim is created."]);
  await waitFor(async () => (await b.call("GET", "/streams/sim")).status === 200, "the stream on b", 10_000);
  // The secret is not in the bucket: only the HMAC of each entry is.
  for await (const k of await kv.keys()) expect(new TextDecoder().decode((await kv.get(k))!.value)).not.toContain(GROUP_SECRET);
}, 30_000);

test("injected, tampered, moved, deleted and invalid entries are refused whole, logged and counted", async () => {
  const [a, b] = floes as [DaemonProc, DaemonProc];
  const before = (await refusals(a)).count;
  const target = join(tempHome(), "stolen.txt");
  const evil = JSON.stringify({ id: "evil", sql: "SELECT * FROM sim", actions: [{ file: { path: target } }] });

  // 1. An unsigned rule entry, its envelope copied from the members' own.
  await kv.put(bucketKey("rule", "evil"), JSON.stringify(envelope(evil)));
  // 2. A signed entry with its content changed (the stream now reads a file).
  const signedStream = JSON.parse(new TextDecoder().decode((await kv.get(bucketKey("stream", "sim")))!.value)) as { v: string; o: string; s: number; h: string };
  await kv.put(bucketKey("stream", "sim"), JSON.stringify({ ...signedStream, v: signedStream.v.replace("memory", "file") }));
  // 3. The same signed entry moved to another key.
  await kv.put(bucketKey("stream", "sim2"), JSON.stringify(signedStream));
  // 4. A key that decodes to an id REST rejects (it could never be deleted over REST).
  await kv.put(bucketKey("rule", "bad id/.."), JSON.stringify(envelope(evil)));
  // 5. A KV delete from outside (members write signed tombstones).
  await kv.delete(bucketKey("stream", "sim"));
  // 6. Signed with the secret, but a rule REST would refuse: its SQL reads a stream that does not exist.
  const signer = new EntrySigner(new TextEncoder().encode(GROUP_SECRET));
  const bad = JSON.stringify({ id: "nostream", sql: "SELECT * FROM missing", actions: [{ log: {} }] });
  const body = { ...envelope(bad, "a", 1_000_000), p: 0 };
  await kv.put(bucketKey("rule", "nostream"), JSON.stringify({ ...body, h: signer.sign(bucketKey("rule", "nostream"), JSON.stringify([body.v, body.o, body.s, body.p])) }));

  for (const d of floes) await waitFor(async () => (await refusals(d)).count >= before + 6, "six refusals", 10_000);
  for (const d of floes) {
    expect((await refusals(d)).count).toBe(before + 6);
    expect(await ruleIds(d)).toEqual([]);
    // The stream is as REST made it: neither the tampered copy nor the delete reached it.
    expect(JSON.parse((await d.call("GET", "/streams/sim")).text).Options.type).toBe("memory");
    expect((await d.call("GET", "/streams/sim2")).status).toBe(400);
  }
  expect(await metric(a)).toBe(before + 6);
  const last = (await refusals(a)).last!;
  expect(last.key).toBe(bucketKey("rule", "nostream"));
  expect(last.reason).toContain("missing");
  const log = a.stderr();
  expect(log).toContain(`cluster: refused the group entry ${bucketKey("rule", "evil")}: no valid signature of the group secret`);
  expect(log).toContain(`cluster: refused the group entry ${bucketKey("rule", "bad id/..")}: id 'bad id/..' contains invalid characters`);
  expect(log).toContain(`cluster: refused the group entry ${bucketKey("stream", "sim")}: del from outside the group`);
  expect(existsSync(target)).toBe(false);
  // REST writes still go through: the group keeps working after the refusals.
  expect((await b.call("POST", "/rules", { id: "ok", sql: "SELECT * FROM sim", actions: [{ nop: {} }] })).status).toBe(201);
  await waitFor(async () => (await ruleIds(a)).includes("ok"), "rule ok on a", 10_000);
}, 30_000);

test("a member starting with refused entries in the bucket takes none of them", async () => {
  const [a, b] = floes as [DaemonProc, DaemonProc];
  // The intruder's delete removed sim from the bucket (the members kept theirs): a REST write stores it again.
  expect((await a.call("PUT", "/streams/sim", { sql: 'CREATE STREAM sim () WITH (TYPE="memory", DATASOURCE="sim")' })).status).toBe(200);
  await waitFor(async () => (await kv.get(bucketKey("stream", "sim")))?.operation === "PUT", "sim stored again", 10_000);
  // An overwrite of a definition the members hold heals when one of them starts: it signs and stores its copy again.
  const ok = JSON.parse(new TextDecoder().decode((await kv.get(bucketKey("rule", "ok")))!.value)) as { v: string };
  await kv.put(bucketKey("rule", "ok"), JSON.stringify({ ...ok, v: ok.v.replace("nop", "log") }));
  await b.stop("SIGTERM");
  floes[1] = await startFloe(b.dir, env("b", { KUIPER__CLUSTER__SECRETFILE: "group.key" }));
  expect(floes[1].stderr()).toContain("cluster: stored rule ok in the group again, signed, from this member's copy");
  await waitFor(async () => JSON.parse(new TextDecoder().decode((await kv.get(bucketKey("rule", "ok")))!.value)).h !== undefined, "ok signed again", 10_000);
  const c = await startFloe(tempHome(), env("c", { KUIPER__CLUSTER__SECRET: GROUP_SECRET }));
  floes.push(c);
  expect(await ruleIds(c)).toEqual(["ok"]);
  expect(JSON.parse((await c.call("GET", "/rules/ok")).text).actions).toEqual([{ nop: {} }]);
  expect(JSON.parse((await c.call("GET", "/streams")).text)).toEqual(["sim"]);
  // evil (unsigned), sim2 (moved), the bad id, and nostream: signed, but its SQL reads no stream.
  expect((await refusals(c)).count).toBe(4);
  expect(await ruleIds(floes[1]!)).toEqual(["ok"]);
  expect(c.stderr()).toContain(`cluster: refused the group entry ${bucketKey("rule", "evil")}: no valid signature of the group secret`);
  expect(c.stderr()).toContain(`cluster: refused the group entry ${bucketKey("rule", "nostream")}: `);
}, 30_000);
