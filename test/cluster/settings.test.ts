/** The `cluster:` section of kuiper.yaml and its `KUIPER__CLUSTER__…` overrides. */
import { expect, test } from "bun:test";
import { hostname } from "node:os";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadKuiperConfig } from "../../lib/config/kuiper.ts";
import { assignPartitions, ownerOf } from "../../lib/cluster/assignment.ts";

test("no cluster section is a single node with the documented defaults", async () => {
  const c = (await loadKuiperConfig(undefined, {})).cluster;
  expect(c).toEqual({ nats: [], group: "default", instance: `${hostname().replace(/[^A-Za-z0-9_-]/g, "_")}-${process.pid}`, partitions: 12, heartbeatMs: 1000, leaseMs: 6000, auth: { secret: "", secretFile: "", nats: {}, base: process.cwd() } });
});

test("kuiper.yaml sets the group; the environment wins over the file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-cl-"));
  writeFileSync(join(dir, "kuiper.yaml"), "cluster:\n  nats: nats://10.0.0.1:4222, nats://10.0.0.2:4222\n  group: plant\n  instance: gw1\n  partitions: 24\n  leaseTimeout: 4s\n");
  const c = (await loadKuiperConfig(dir, { KUIPER__CLUSTER__GROUP: "plant2", KUIPER__CLUSTER__HEARTBEATINTERVAL: "500ms" })).cluster;
  expect(c).toEqual({ nats: ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222"], group: "plant2", instance: "gw1", partitions: 24, heartbeatMs: 500, leaseMs: 4000, auth: { secret: "", secretFile: "", nats: {}, base: dir } });
  const env = (await loadKuiperConfig(undefined, { KUIPER__CLUSTER__NATS: "nats://127.0.0.1:4222", KUIPER__CLUSTER__INSTANCE: "7" })).cluster;
  expect([env.nats, env.instance]).toEqual([["nats://127.0.0.1:4222"], "7"]);
});

test("a group or instance name that cannot name a bucket or subject is refused", async () => {
  await expect(loadKuiperConfig(undefined, { KUIPER__CLUSTER__GROUP: "a.b" })).rejects.toThrow('invalid cluster.group "a.b": use letters, digits, - and _');
  await expect(loadKuiperConfig(undefined, { KUIPER__CLUSTER__INSTANCE: "x y" })).rejects.toThrow('invalid cluster.instance "x y": use letters, digits, - and _');
});

test("the lease is at least two heartbeats", async () => {
  const c = (await loadKuiperConfig(undefined, { KUIPER__CLUSTER__HEARTBEATINTERVAL: "2s", KUIPER__CLUSTER__LEASETIMEOUT: "1s" })).cluster;
  expect([c.heartbeatMs, c.leaseMs]).toEqual([2000, 4000]);
});

test("bounded-load rendezvous assignment: every partition has one owner, loads within one, and a change moves few others", () => {
  const owners = (m: Map<string, number[]>) => new Map([...m].flatMap(([id, ps]) => ps.map((p) => [p, id] as const)));
  const three = assignPartitions(1200, ["a", "b", "c"]);
  expect([...three.values()].map((ps) => ps.length)).toEqual([400, 400, 400]);
  expect([...assignPartitions(12, ["m0", "m1", "m2"]).values()].map((ps) => ps.length)).toEqual([4, 4, 4]);
  const loads = [...assignPartitions(1000, ["a", "b", "c"]).values()].map((ps) => ps.length);
  expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
  const o3 = owners(three);
  // b leaves: all of its partitions move, and fewer than 5% of the others' (rebalanced to within one).
  const o2 = owners(assignPartitions(1200, ["a", "c"]));
  let others = 0;
  for (const [p, id] of o3) if (id === "b") expect(o2.get(p)).not.toBe("b");
  else if (o2.get(p) !== id) others++;
  expect(others).toBeLessThan(40);
  // d joins: it gets its quarter; fewer than 5% move between the others.
  const o4 = owners(assignPartitions(1200, ["a", "b", "c", "d"]));
  let between = 0;
  for (const [p, id] of o4) if (id !== "d" && o3.get(p) !== id) between++;
  expect([...o4.values()].filter((id) => id === "d")).toHaveLength(300);
  expect(between).toBeLessThan(60);
  expect(ownerOf(5, 12, [])).toBeUndefined();
  expect(ownerOf(5, 12, ["c", "a", "b"])).toBe(ownerOf(5, 12, ["a", "b", "c"]));
});
