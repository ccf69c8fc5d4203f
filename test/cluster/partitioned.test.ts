/**
 * Partitioned execution in a floe group (docs/group.md): a stream whose DATASOURCE holds
 * `{partition}` is read by each member only for the partitions it owns, one run (and state) per
 * partition; after kill -9 of a member, the members that take its partitions over restore the
 * window state it checkpointed into the group and complete its windows.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import mqtt from "mqtt";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { GROUP_SECRET, NatsServer } from "../helpers/nats.ts";
import { startFloe, tempHome, type DaemonProc } from "../server/daemon.ts";
import { waitFor } from "../helpers/runtime.ts";

let nats: NatsServer;
let broker: Mosquitto;
let client: mqtt.MqttClient;
const floes = new Map<string, DaemonProc>();
const out: { c: number; items: number[]; p: number }[] = [];

interface View {
  instances: { instance: string; live: boolean; partitions: number[] }[];
  partitionedRules: Record<string, number[]>;
}

const env = (instance: string) => ({
  KUIPER__CLUSTER__NATS: nats.url,
    KUIPER__CLUSTER__SECRET: GROUP_SECRET,
  KUIPER__CLUSTER__GROUP: "pg",
  KUIPER__CLUSTER__INSTANCE: instance,
  KUIPER__CLUSTER__PARTITIONS: "4",
  KUIPER__CLUSTER__HEARTBEATINTERVAL: "300ms",
  KUIPER__CLUSTER__LEASETIMEOUT: "2s",
});

async function view(d: DaemonProc): Promise<View> {
  return JSON.parse((await d.call("GET", "/cluster")).text) as View;
}

const until = (fn: () => Promise<boolean> | boolean, ms = 10_000) => waitFor(fn, "the condition", ms, 100);

/** Every live member runs exactly the partitions it owns (and the rule is running there). */
async function settled(members: DaemonProc[]): Promise<boolean> {
  const reading: string[] = [];
  for (const d of members) {
    const v = await view(d);
    const me = v.instances.find((i) => i.live && i.instance === [...floes].find(([, f]) => f === d)![0]);
    if (!me || v.instances.filter((i) => i.live).length !== members.length) return false;
    if ((v.partitionedRules.rp ?? []).join() !== me.partitions.join()) return false;
    if (me.partitions.length > 0) reading.push(me.instance);
  }
  // A member that owns no partition runs the rule with nothing to read (and no source node).
  const st = JSON.parse((await members[0]!.call("GET", "/v2/rules/rp/status?instance=all")).text) as Record<string, Record<string, number>>;
  return Object.keys(st).length === members.length && reading.every((id) => st[id]!.source_tele_0_connection_status === 1);
}

beforeAll(async () => {
  nats = await NatsServer.start();
  broker = await Mosquitto.start();
  client = await mqtt.connectAsync(broker.url.replace("tcp:", "mqtt:"));
  await client.subscribeAsync("out", { qos: 1 });
  client.on("message", (_t, payload) => {
    for (const r of JSON.parse(payload.toString()) as { c: number; items: number[] }[]) out.push({ ...r, p: Math.floor(r.items[0]! / 100) });
  });
  for (const id of ["a", "b", "c"]) floes.set(id, await startFloe(tempHome(), env(id)));
}, 60_000);

afterAll(async () => {
  for (const f of floes.values()) await f.stop("SIGKILL");
  await client?.endAsync();
  await broker?.stop();
  await nats?.stop();
});

test("each member reads only its partitions; a killed member's partitions resume elsewhere from its checkpoints", async () => {
  const a = floes.get("a")!;
  expect((await a.call("PUT", "/metadata/sources/mqtt/confKeys/m", { server: broker.url, qos: 1 })).status).toBe(200);
  expect((await a.call("POST", "/streams", { sql: 'CREATE STREAM tele () WITH (TYPE="mqtt", DATASOURCE="tele/{partition}/+", CONF_KEY="m")' })).status).toBe(201);
  const rule = {
    id: "rp",
    sql: "SELECT count(*) AS c, collect(i) AS items FROM tele GROUP BY COUNTWINDOW(4)",
    actions: [{ mqtt: { server: broker.url, topic: "out", qos: 1 } }],
    options: { qos: 1, checkpointInterval: 200 },
  };
  expect((await floes.get("b")!.call("POST", "/rules", rule)).status).toBe(201);
  const all = [...floes.values()];
  await until(() => settled(all), 15_000).catch(async (e) => {
    for (const d of all) console.log(JSON.stringify(await view(d)), (await d.call("GET", "/v2/rules/rp/status")).text, d.stderr().slice(-3000));
    throw e;
  });

  // Two messages per partition (item 100·p + k): each member counts those of its partitions only.
  for (let p = 0; p < 4; p++) for (let k = 0; k < 2; k++) await client.publishAsync(`tele/${p}/dev${p}`, JSON.stringify({ i: 100 * p + k }), { qos: 1 });
  await until(async () => (JSON.parse((await a.call("GET", "/v2/rules/rp/status")).text) as Record<string, number>).source_tele_0_records_in_total === 8);
  const owners = new Map<string, number[]>();
  for (const [id, d] of floes) owners.set(id, (await view(d)).partitionedRules.rp!);
  const each = JSON.parse((await a.call("GET", "/v2/rules/rp/status?instance=all")).text) as Record<string, Record<string, number>>;
  for (const [id, ps] of owners) expect(each[id]!.source_tele_0_records_in_total ?? 0).toBe(2 * ps.length);
  expect(out).toEqual([]);

  // The member owning the most partitions dies after its checkpoints (200 ms) reached the group.
  const [victim, lost] = [...owners].sort((x, y) => y[1].length - x[1].length)[0]!;
  expect(lost.length).toBeGreaterThan(0);
  await Bun.sleep(1500);
  await floes.get(victim)!.stop("SIGKILL");
  floes.delete(victim);
  const survivors = [...floes.values()];
  await until(() => settled(survivors), 15_000);

  // Two more per partition complete every window of 4: the victim's partitions only with its restored state.
  for (let p = 0; p < 4; p++) for (let k = 2; k < 4; k++) await client.publishAsync(`tele/${p}/dev${p}`, JSON.stringify({ i: 100 * p + k }), { qos: 1 });
  await until(() => out.length === 4);
  expect(out.sort((x, y) => x.p - y.p)).toEqual([0, 1, 2, 3].map((p) => ({ c: 4, items: [0, 1, 2, 3].map((k) => 100 * p + k), p })));
  out.length = 0;

  // A rebalance while windows are half full: the victim comes back and gets its partitions back
  // from live owners, which hand over the state they stop with.
  for (let p = 0; p < 4; p++) for (let k = 4; k < 6; k++) await client.publishAsync(`tele/${p}/dev${p}`, JSON.stringify({ i: 100 * p + k }), { qos: 1 });
  await until(async () => (JSON.parse((await survivors[0]!.call("GET", "/v2/rules/rp/status")).text) as Record<string, number>).source_tele_0_records_in_total >= 8);
  floes.set(victim, await startFloe(tempHome(), env(victim)));
  await until(() => settled([...floes.values()]), 15_000);
  expect((await view(floes.get(victim)!)).partitionedRules.rp).toEqual(lost);
  for (let p = 0; p < 4; p++) for (let k = 6; k < 8; k++) await client.publishAsync(`tele/${p}/dev${p}`, JSON.stringify({ i: 100 * p + k }), { qos: 1 });
  await until(() => out.length === 4);
  expect(out.sort((x, y) => x.p - y.p)).toEqual([0, 1, 2, 3].map((p) => ({ c: 4, items: [4, 5, 6, 7].map((k) => 100 * p + k), p })));
}, 60_000);
