/**
 * A floe group over a real NATS server with JetStream (docs/group.md): three `floe serve`
 * instances with the same `cluster.group` share their definitions, list each other, aggregate a
 * rule's status, and take over the partitions of a member killed with SIGKILL within the bound.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFloe, tempHome, type DaemonProc } from "../server/daemon.ts";
import mqtt from "mqtt";
import { freePort, Mosquitto } from "../helpers/mosquitto.ts";
import { GROUP_SECRET, NatsServer } from "../helpers/nats.ts";
import { waitFor } from "../helpers/runtime.ts";

let nats: NatsServer;
const floes: DaemonProc[] = [];

interface View {
  group: string;
  instance: string;
  leader: string;
  connected: boolean;
  unsentDefinitions: number;
  partitions: number;
  instances: { instance: string; rest: string; startedAt: number; lastSeen: number; live: boolean; partitions: number[] }[];
}

function groupEnv(instance: string): Record<string, string> {
  return {
    KUIPER__CLUSTER__NATS: nats.url,
    KUIPER__CLUSTER__SECRET: GROUP_SECRET,
    KUIPER__CLUSTER__GROUP: "g1",
    KUIPER__CLUSTER__INSTANCE: instance,
    KUIPER__CLUSTER__HEARTBEATINTERVAL: "500ms",
    KUIPER__CLUSTER__LEASETIMEOUT: "3s",
  };
}

async function view(d: DaemonProc): Promise<View> {
  const r = await d.call("GET", "/cluster");
  expect(r.status).toBe(200);
  return JSON.parse(r.text) as View;
}

/** Polls `fn` until it returns true (every 100 ms, up to `ms`); returns the time it took. */
const until = (fn: () => Promise<boolean>, ms = 10_000) => waitFor(fn, "the condition", ms, 100);

const liveOf = (v: View) => v.instances.filter((i) => i.live).map((i) => i.instance);

beforeAll(async () => {
  nats = await NatsServer.start();
  for (const id of ["a", "b", "c"]) floes.push(await startFloe(tempHome(), groupEnv(id)));
  await until(async () => (await Promise.all(floes.map(view))).every((v) => liveOf(v).length === 3));
}, 60_000);

afterAll(async () => {
  for (const f of floes) await f.stop("SIGKILL");
  await nats?.stop();
});

test("every member lists all three, agrees on the leader, and each partition has exactly one owner", async () => {
  const views = await Promise.all(floes.map(view));
  for (const v of views) {
    expect(v.group).toBe("g1");
    expect([v.connected, v.unsentDefinitions]).toEqual([true, 0]);
    expect(liveOf(v)).toEqual(["a", "b", "c"]);
    expect(v.leader).toBe(views[0]!.leader);
    expect(v.partitions).toBe(12);
    const owned = v.instances.flatMap((i) => i.partitions).sort((x, y) => x - y);
    expect(owned).toEqual([...Array(12).keys()]);
    expect(v.instances.find((i) => i.instance === "b")!.rest).toBe(floes[1]!.base);
  }
  expect(views.map((v) => v.instance)).toEqual(["a", "b", "c"]);
  // The same assignment everywhere: it is computed, not negotiated.
  expect(views[1]!.instances).toEqual(views[0]!.instances.map((i, k) => ({ ...i, lastSeen: views[1]!.instances[k]!.lastSeen, startedAt: views[1]!.instances[k]!.startedAt })));
});

test("a stream and a rule created on one member exist on the others; an update and a delete follow", async () => {
  const [a, b, c] = floes as [DaemonProc, DaemonProc, DaemonProc];
  const sim = `CREATE STREAM sim () WITH (TYPE="simulator", EXTRA="{\\"data\\":[{\\"n\\":1}],\\"interval\\":10,\\"loop\\":true}")`;
  expect((await a.call("POST", "/streams", { sql: sim })).status).toBe(201);
  const rule = { id: "r1", sql: "SELECT n FROM sim", actions: [{ nop: {} }] };
  // No waiting between calls on different members: each call sees what the calls before it wrote.
  expect((await b.call("POST", "/rules", rule)).status).toBe(201);
  expect((await c.call("GET", "/streams/sim")).status).toBe(200);
  expect(JSON.parse((await c.call("GET", "/rules/r1")).text)).toEqual(rule);
  for (const d of floes) {
    await until(async () => (await d.call("GET", "/streams/sim")).status === 200);
    await until(async () => JSON.parse((await d.call("GET", "/rules")).text).some((r: { id: string; status: string }) => r.id === "r1" && r.status === "running"));
  }
  expect(JSON.parse((await c.call("GET", "/rules/r1")).text)).toEqual(rule);

  // Stopping on one member stops the rule everywhere (triggered is part of the definition).
  expect((await c.call("POST", "/rules/r1/stop")).status).toBe(200);
  for (const d of floes) await until(async () => JSON.parse((await d.call("GET", "/rules")).text).find((r: { id: string }) => r.id === "r1").status === "stopped");
  expect((await a.call("POST", "/rules/r1/start")).status).toBe(200);
  for (const d of floes) await until(async () => JSON.parse((await d.call("GET", "/rules")).text).find((r: { id: string }) => r.id === "r1").status === "running");

  const updated = { ...rule, sql: "SELECT n, n + 1 AS m FROM sim" };
  expect((await a.call("PUT", "/rules/r1", updated)).status).toBe(200);
  await until(async () => JSON.parse((await c.call("GET", "/rules/r1")).text).sql === updated.sql);

  expect((await c.call("DELETE", "/rules/r1")).status).toBe(200);
  expect((await a.call("DELETE", "/streams/sim")).status).toBe(200);
  for (const d of floes) {
    await until(async () => (await d.call("GET", "/rules/r1")).status === 404);
    await until(async () => (await d.call("GET", "/streams")).text.trim() === "[]");
  }
});

test("confKeys and JavaScript UDFs are group-wide too", async () => {
  const [a, b, c] = floes as [DaemonProc, DaemonProc, DaemonProc];
  expect((await a.call("PUT", "/metadata/sources/mqtt/confKeys/k1", { server: "tcp://127.0.0.1:1883" })).status).toBe(200);
  await until(async () => (await c.call("GET", "/metadata/sources/yaml/mqtt")).text.includes("k1"));
  const udf = { id: "twice", description: "", script: "function twice(x) { return x * 2; }", isAgg: false };
  expect((await b.call("POST", "/udf/javascript", udf)).status).toBe(201);
  await until(async () => (await c.call("GET", "/udf/javascript/twice")).status === 200);
  expect(JSON.parse((await c.call("GET", "/udf/javascript/twice")).text)).toEqual(udf);
  // c can parse a rule calling it: the function is loaded there, not just listed.
  expect((await a.call("POST", "/streams", { sql: 'CREATE STREAM s2 () WITH (TYPE="memory", DATASOURCE="s2")' })).status).toBe(201);
  await until(async () => (await c.call("GET", "/streams/s2")).status === 200);
  const v = { id: "v", sql: "SELECT twice(n) FROM s2", actions: [{ nop: {} }] };
  expect((await c.call("POST", "/rules/validate", v)).text).toBe('{"sources":["s2"],"valid":true}');
  expect((await a.call("DELETE", "/udf/javascript/twice")).status).toBe(200);
  await until(async () => (await c.call("GET", "/udf/javascript/twice")).status !== 200);
  expect((await c.call("POST", "/rules/validate", v)).status).toBe(422);
  expect((await b.call("DELETE", "/streams/s2")).status).toBe(200);
});

test("a rule's status adds up over the members; ?instance= shows one, ?instance=all each", async () => {
  const [a, b] = floes as [DaemonProc, DaemonProc];
  const sim = `CREATE STREAM sim2 () WITH (TYPE="simulator", EXTRA="{\\"data\\":[{\\"n\\":1}],\\"interval\\":10,\\"loop\\":true}")`;
  expect((await a.call("POST", "/streams", { sql: sim })).status).toBe(201);
  expect((await a.call("POST", "/rules", { id: "r2", sql: "SELECT n FROM sim2", actions: [{ nop: {} }] })).status).toBe(201);
  await until(async () => {
    const each = JSON.parse((await b.call("GET", "/v2/rules/r2/status?instance=all")).text) as Record<string, Record<string, number | string>>;
    return Object.keys(each).length === 3 && Object.values(each).every((s) => s.status === "running" && (s.source_sim2_0_records_in_total as number) > 0);
  });
  const each = JSON.parse((await b.call("GET", "/v2/rules/r2/status?instance=all")).text) as Record<string, Record<string, number>>;
  const total = JSON.parse((await b.call("GET", "/v2/rules/r2/status")).text) as Record<string, number | string>;
  const sum = Object.values(each).reduce((s, m) => s + m.source_sim2_0_records_in_total!, 0);
  // Counted a moment after the per-instance view: at least that many.
  expect(total.status).toBe("running");
  expect(total.source_sim2_0_records_in_total as number).toBeGreaterThanOrEqual(sum);
  const onlyC = JSON.parse((await a.call("GET", "/v2/rules/r2/status?instance=c")).text) as Record<string, number>;
  expect(onlyC.source_sim2_0_records_in_total).toBeGreaterThanOrEqual(each.c!.source_sim2_0_records_in_total!);
  expect(onlyC.source_sim2_0_records_in_total).toBeLessThan(total.source_sim2_0_records_in_total as number);
  // The legacy text form keeps its shape.
  expect((await a.call("GET", "/rules/r2/status")).text).toStartWith('{\n  "status": "running",\n');
  const bad = await a.call("GET", "/v2/rules/r2/status?instance=zz");
  expect([bad.status, bad.text]).toEqual([404, '{"error":1002,"message":"get rule status error: instance zz is not a live member of group g1"}\n']);
  expect((await a.call("DELETE", "/rules/r2")).status).toBe(200);
  expect((await b.call("DELETE", "/streams/sim2")).status).toBe(200);
});

test("a stateless rule scales out over an MQTT shared subscription: each message is counted once, by one member", async () => {
  const [a, b, c] = floes as [DaemonProc, DaemonProc, DaemonProc];
  const broker = await Mosquitto.start();
  const client = await mqtt.connectAsync(broker.url.replace("tcp:", "mqtt:"));
  try {
    // The confKey and the stream are created once, on two different members.
    expect((await a.call("PUT", "/metadata/sources/mqtt/confKeys/shared", { server: broker.url, qos: 1 })).status).toBe(200);
    expect((await b.call("POST", "/streams", { sql: 'CREATE STREAM tele () WITH (TYPE="mqtt", DATASOURCE="$share/floe/tele/#", CONF_KEY="shared")' })).status).toBe(201);
    expect((await c.call("POST", "/rules", { id: "rs", sql: "SELECT * FROM tele", actions: [{ nop: {} }] })).status).toBe(201);
    await until(async () => {
      const each = JSON.parse((await a.call("GET", "/v2/rules/rs/status?instance=all")).text) as Record<string, Record<string, number | string>>;
      return Object.values(each).filter((s) => s.source_tele_0_connection_status === 1).length === 3;
    });
    for (let i = 0; i < 300; i++) await client.publishAsync(`tele/d${i % 7}`, JSON.stringify({ i }), { qos: 1 });
    await until(async () => (JSON.parse((await b.call("GET", "/v2/rules/rs/status")).text) as Record<string, number>).source_tele_0_records_in_total === 300);
    const each = JSON.parse((await b.call("GET", "/v2/rules/rs/status?instance=all")).text) as Record<string, Record<string, number>>;
    const counts = Object.values(each).map((s) => s.source_tele_0_records_in_total!);
    expect(counts.reduce((x, y) => x + y, 0)).toBe(300);
    for (const n of counts) expect(n).toBeGreaterThan(0);
    expect((await a.call("DELETE", "/rules/rs")).status).toBe(200);
    expect((await a.call("DELETE", "/streams/tele")).status).toBe(200);
  } finally {
    await client.endAsync();
    await broker.stop();
  }
}, 30_000);

test("kill -9 of a member: the others take its partitions over within the lease bound", async () => {
  const [a, b, c] = floes as [DaemonProc, DaemonProc, DaemonProc];
  const before = await view(a);
  const cParts = before.instances.find((i) => i.instance === "c")!.partitions;
  await c.stop("SIGKILL");
  const took = await until(async () => {
    const vs = await Promise.all([view(a), view(b)]);
    return vs.every((v) => liveOf(v).join() === "a,b" && v.instances.filter((i) => i.live).flatMap((i) => i.partitions).length === 12);
  }, 10_000);
  // Lease 3 s + heartbeat 0.5 s + one check (the default 6 s + 1 s stays under 10 s the same way).
  expect(took).toBeLessThan(5_000);
  const after = await view(a);
  // c's partitions moved; a survivor gives up at most one of its own to rebalance (bounded-load rendezvous hashing).
  for (const i of after.instances.filter((x) => x.live)) {
    const had = before.instances.find((x) => x.instance === i.instance)!.partitions;
    expect(i.partitions).toHaveLength(6);
    expect(had.filter((p) => !i.partitions.includes(p)).length).toBeLessThanOrEqual(1);
  }
  // c comes back with the same data dir: it rejoins and gets its partitions back.
  floes[2] = await startFloe(c.dir, groupEnv("c"));
  await until(async () => liveOf(await view(a)).length === 3);
  expect((await view(a)).instances.find((i) => i.instance === "c")!.partitions).toEqual(cParts);
}, 30_000);

test("a graceful stop leaves the group at once", async () => {
  const [a, b] = floes as [DaemonProc, DaemonProc];
  await b.stop("SIGTERM");
  const took = await until(async () => liveOf(await view(a)).join() === "a,c", 10_000);
  expect(took).toBeLessThan(2_000);
  // What changes while b is away is there when it comes back.
  expect((await a.call("POST", "/streams", { sql: 'CREATE STREAM later () WITH (TYPE="memory", DATASOURCE="later")' })).status).toBe(201);
  floes[1] = await startFloe(b.dir, groupEnv("b"));
  expect(JSON.parse((await floes[1].call("GET", "/streams")).text)).toContain("later");
  expect((await floes[1].call("GET", "/streams")).text).toBe((await a.call("GET", "/streams")).text);
  await until(async () => liveOf(await view(a)).length === 3);
}, 30_000);

test("without cluster.nats a daemon is a single node: no group, no NATS", async () => {
  const solo = await startFloe();
  try {
    const r = await solo.call("GET", "/cluster");
    expect([r.status, r.text]).toEqual([404, '{"error":1002,"message":"this instance is not in a group: cluster.nats is not set"}\n']);
    expect((await solo.call("POST", "/streams", { sql: 'CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="s")' })).status).toBe(201);
    expect(JSON.parse((await floes[0]!.call("GET", "/streams")).text)).not.toContain("s");
  } finally {
    await solo.stop();
  }
});

test("a member that cannot reach NATS does not start, and says why", async () => {
  // A port nothing listens on (no server started and stopped for it).
  const dead = `nats://127.0.0.1:${await freePort()}`;
  await expect(startFloe(tempHome(), { KUIPER__CLUSTER__NATS: dead, KUIPER__CLUSTER__SECRET: GROUP_SECRET, KUIPER__CLUSTER__INSTANCE: "z" })).rejects.toThrow(`cluster: cannot connect to NATS ${dead}`);
});
