/**
 * Fencing of partition ownership over a real NATS server with JetStream: a claim is a
 * compare-and-set on the checkpoint manifest's KV revision that starts a new epoch; a write of a
 * superseded owner is refused by the server and counted; the holder learns of a newer claim
 * through its watch; a claim of the checkpoint read stores no chunks of its own; and a member
 * joining in the middle of a take-over never runs a partition alongside the member that claimed it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Kvm } from "@nats-io/kv";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterNode, FencedError, ownerOf } from "../../lib/cluster/index.ts";
import { NodeMetrics } from "../../lib/core/metrics.ts";
import { PartitionedRun } from "../../lib/server/partitioned-run.ts";
import type { StoredRule } from "../../lib/store/stored-rule.ts";
import { GROUP_AUTH, NatsServer } from "../helpers/nats.ts";
import { waitFor } from "../helpers/runtime.ts";

let nats: NatsServer;
const nodes: ClusterNode[] = [];
const runs: PartitionedRun[] = [];

beforeAll(async () => {
  nats = await NatsServer.start();
});

afterAll(async () => {
  for (const r of runs) await r.stop().catch(() => {});
  for (const n of nodes) await n.close().catch(() => {});
  await nats?.stop();
});

const until = (fn: () => boolean | Promise<boolean>, what = "the condition", ms = 15_000) => waitFor(fn, what, ms, 20);

async function connect(group: string, instance: string, log: (l: string) => void = () => {}): Promise<ClusterNode> {
  const node = await ClusterNode.connect({ nats: [nats.url], group, instance, partitions: 12, heartbeatMs: 200, leaseMs: 1000, auth: GROUP_AUTH }, log);
  nodes.push(node);
  return node;
}

test("of two members claiming one partition at once, one wins; a superseded owner's checkpoint is refused by the server", async () => {
  const a = await connect("cas", "a");
  const b = await connect("cas", "b");
  // Both decide on the same read (no manifest yet), then claim at once.
  const [ra, rb] = await Promise.all([a.checkpoints.read("r", 3), b.checkpoints.read("r", 3)]);
  expect([ra.basis, rb.basis]).toEqual([{ rev: 0, epoch: 0 }, { rev: 0, epoch: 0 }]);
  const claims = await Promise.allSettled([a.checkpoints.claim("r", 3, "from-a", ra.basis), b.checkpoints.claim("r", 3, "from-b", rb.basis)]);
  const won = claims.filter((c) => c.status === "fulfilled");
  const lost = claims.filter((c): c is PromiseRejectedResult => c.status === "rejected");
  expect([won.length, lost.length]).toEqual([1, 1]);
  expect(lost[0]!.reason).toBeInstanceOf(FencedError);
  const [winner, loser] = claims[0]!.status === "fulfilled" ? [a, b] : [b, a];
  const first = await winner.checkpoints.load("r", 3);
  expect([first?.owner, first?.epoch, first?.state]).toEqual([winner.instance, 1, `from-${winner.instance}`]);
  await winner.checkpoints.save("r", 3, "state-1");

  // The winner pauses (its watch is not read: a stopped process) while the loser claims again.
  winner.checkpoints.stop();
  const held = await loser.checkpoints.claim("r", 3, "state-1", (await loser.checkpoints.read("r", 3)).basis);
  expect(held.epoch).toBe(2);
  // Its late checkpoint reaches the server, which refuses it: the manifest's revision moved on.
  await expect(winner.checkpoints.save("r", 3, "late")).rejects.toThrow(`partition 3: a newer owner claimed it; this member's write of epoch 1 was refused`);
  expect(winner.checkpoints.fencedWrites).toBe(1);
  expect(winner.view().fencedWrites).toBe(1);
  expect(winner.view().refusedEntries.last?.reason).toContain(`${loser.instance} holds epoch 2`);
  const now = await loser.checkpoints.load("r", 3);
  expect([now?.owner, now?.epoch, now?.state]).toEqual([loser.instance, 2, "state-1"]);
  // The next write of the stale owner is refused here already: it knows it lost the partition.
  await expect(winner.checkpoints.save("r", 3, "later")).rejects.toThrow("this member does not hold the partition");
  await loser.checkpoints.save("r", 3, "state-2");
  expect((await winner.checkpoints.load("r", 3))?.state).toBe("state-2");
});

test("a holder learns of a newer claim through its watch before it writes again", async () => {
  const a = await connect("watch", "a");
  const b = await connect("watch", "b");
  const mine = await a.checkpoints.claim("r", 0, "", (await a.checkpoints.read("r", 0)).basis);
  expect(mine.valid).toBe(true);
  await b.checkpoints.claim("r", 0, "", (await b.checkpoints.read("r", 0)).basis);
  await until(() => !mine.valid, "a's ownership superseded");
  await expect(a.checkpoints.save("r", 0, "x")).rejects.toBeInstanceOf(FencedError);
  // Nothing reached the server: its only refusal is the claim it lost, none.
  expect(a.checkpoints.fencedWrites).toBe(0);
});

test("a claim is conditional on the read its caller decided on: a write since then, an upload or another claim, fails it", async () => {
  const a = await connect("basis", "a");
  const b = await connect("basis", "b");
  const c = await connect("basis", "c");
  await a.checkpoints.claim("r", 5, "a-1", (await a.checkpoints.read("r", 5)).basis);
  // c reads a's checkpoint and decides to take the partition over from it.
  const seen = await c.checkpoints.read("r", 5);
  expect([seen.checkpoint?.owner, seen.checkpoint?.state, seen.basis.epoch]).toEqual(["a", "a-1", 1]);
  // a uploads a newer state meanwhile: a claim from the older one would start from a state a moved past.
  await a.checkpoints.save("r", 5, "a-2");
  await expect(c.checkpoints.claim("r", 5, "a-1", seen.basis)).rejects.toBeInstanceOf(FencedError);
  expect(c.checkpoints.fencedWrites).toBe(1);
  const kept = await b.checkpoints.load("r", 5);
  expect([kept?.owner, kept?.epoch, kept?.state]).toEqual(["a", 1, "a-2"]);
  // b and c both read the newest; b claims first. c's claim, decided on a's checkpoint, does not
  // overwrite b's claim it never saw (a read of its own inside the claim would have, with epoch 3).
  const [rb, rc] = await Promise.all([b.checkpoints.read("r", 5), c.checkpoints.read("r", 5)]);
  const hb = await b.checkpoints.claim("r", 5, rb.checkpoint!.state, rb.basis);
  expect(hb.epoch).toBe(2);
  await expect(c.checkpoints.claim("r", 5, rc.checkpoint!.state, rc.basis)).rejects.toBeInstanceOf(FencedError);
  expect(hb.valid).toBe(true);
  const now = await a.checkpoints.load("r", 5);
  expect([now?.owner, now?.epoch, now?.state]).toEqual(["b", 2, "a-2"]);
  // Read again, c sees b's claim (and, b being live in a real group, would wait for its release).
  const again = await c.checkpoints.read("r", 5);
  expect([again.checkpoint?.owner, again.basis.epoch]).toEqual(["b", 2]);
  // A manifest deleted with its rule: the next claim is conditional on the deletion's revision, from epoch 1.
  await a.checkpoints.clear("r");
  const gone = await c.checkpoints.read("r", 5);
  expect(gone.checkpoint).toBeUndefined();
  expect(gone.basis.rev).toBeGreaterThan(0);
  expect((await c.checkpoints.claim("r", 5, "", gone.basis)).epoch).toBe(1);
});

test("a member joining mid-take-over: the partition it wins runs in one place at a time, in epoch order", async () => {
  const group = "midtake";
  const events: string[] = [];
  /** a's start of a run waits here: its take-over is in progress (claimed, not started) meanwhile. */
  let open!: () => void;
  const hold = new Promise<void>((r) => (open = r));
  const fences = new Map<string, () => boolean>();
  const member = async (instance: string, releaseWaitMs: number) => {
    const node = await connect(group, instance);
    await node.join(`http://${instance}`);
    const run = new PartitionedRun({
      def: { id: "r", options: { qos: 1 } } as unknown as StoredRule,
      partitions: 12,
      cluster: node,
      dataDir: mkdtempSync(join(tmpdir(), "floe-fence-")),
      onExit: () => {},
      exists: () => true,
      log: (l) => events.push(`log ${instance} ${l}`),
      uploadEveryMs: 100,
      releaseWaitMs,
      startPartition: async (p, epoch, fence) => {
        if (instance === "a") await hold;
        fences.set(`${instance} ${p}`, fence);
        events.push(`start ${instance} ${p} ${epoch}`);
        return {
          nodes: () => [new NodeMetrics("source", "s")],
          topo: () => ({ sources: [], edges: {} }),
          stop: async () => void events.push(`stop ${instance} ${p}`),
        };
      },
    });
    runs.push(run);
    void run.open();
    return { node, run };
  };
  // Alone, a claims partition 0 first (ascending) and stalls starting it.
  const a = await member("a", 5000);
  await until(async () => (await a.node.checkpoints.load("r", 0))?.owner === "a", "a claimed partition 0");
  expect(events.filter((e) => e.startsWith("start "))).toEqual([]);
  // The joining member is one that wins partition 0 from a; it waits only briefly for a's release.
  const cName = [...Array(64).keys()].map((i) => `j${i}`).find((id) => ownerOf(0, 12, ["a", id]) === id)!;
  expect(cName).toBeDefined();
  const c = await member(cName, 300);
  const toC = [...Array(12).keys()].filter((p) => ownerOf(p, 12, ["a", cName]) === cName);
  await until(async () => (await c.node.checkpoints.load("r", 0))?.owner === cName, `${cName} claimed partition 0 over a's stalled claim`);
  open();
  const toA = [...Array(12).keys()].filter((p) => !toC.includes(p));
  await until(() => c.run.owned().join() === toC.join() && a.run.owned().join() === toA.join(), "the partitions settled");
  // a's run of partition 0 started after c's claim: fenced from its start (no checkpoint, no acknowledgement, no result), then stopped.
  expect(fences.get("a 0")!()).toBe(false);
  expect(events).toContain("start a 0 1");
  expect(events).toContain(`start ${cName} 0 2`);
  expect(events.indexOf("stop a 0")).toBeGreaterThan(events.indexOf("start a 0 1"));
  expect(events).toContain("log a rule r: partition 0 stopped here: another member claimed it (epoch 1 is superseded)");
  // Nothing of a's reached the group after c's claim: the checkpoint is c's, epoch 2.
  const cp = await c.node.checkpoints.load("r", 0);
  expect([cp?.owner, cp?.epoch]).toEqual([cName, 2]);
  // The other partitions each run once, fenced open, under the epoch in the group.
  for (const p of a.run.owned()) expect(fences.get(`a ${p}`)!()).toBe(true);
  for (const p of toC) expect(fences.get(`${cName} ${p}`)!()).toBe(true);
}, 30_000);

test("a claim of the checkpoint read names the chunks already stored; the new owner's next upload replaces and purges them", async () => {
  const a = await connect("reuse", "a");
  const b = await connect("reuse", "b");
  const kv = await new Kvm(a.nc).open("floe_reuse_state");
  const chunks = async () => {
    const out: string[] = [];
    for await (const k of await kv.keys("c.>")) if ((await kv.get(k))?.operation === "PUT") out.push(k);
    return out.sort();
  };
  await a.checkpoints.claim("r", 0, "s0", (await a.checkpoints.read("r", 0)).basis);
  await a.checkpoints.save("r", 0, "s1");
  const before = await chunks();
  expect(before.length).toBe(1);
  // b takes partition 0 over (a is dead) from the state it read: only the manifest is written.
  const at = await b.checkpoints.read("r", 0);
  const held = await b.checkpoints.claim("r", 0, at.checkpoint!.state, at.basis);
  expect(await chunks()).toEqual(before);
  expect(await b.checkpoints.load("r", 0)).toMatchObject({ state: "s1", owner: "b", epoch: 2 });
  // a superseded owner's write is refused and leaves the chunks b's manifest names alone.
  await expect(a.checkpoints.save("r", 0, "s1-late")).rejects.toBeInstanceOf(FencedError);
  expect(await chunks()).toEqual(before);
  await b.checkpoints.save("r", 0, "s2");
  const after = await chunks();
  expect(after.length).toBe(1);
  expect(after).not.toEqual(before);
  expect(await b.checkpoints.load("r", 0)).toMatchObject({ state: "s2", owner: "b", epoch: 2 });
  expect(held.valid).toBe(true);
});

test("a read takes the manifest the watch brought without asking the server for it; a claim on a basis the server has moved past still fails", async () => {
  const a = await connect("watched", "a");
  const b = await connect("watched", "b");
  await b.checkpoints.claim("r", 0, "b0", (await b.checkpoints.read("r", 0)).basis);
  await b.checkpoints.save("r", 0, "b1");
  await until(async () => (await a.checkpoints.read("r", 0)).checkpoint?.state === "b1", "a's watch brought b's upload");
  const kv = (a.checkpoints as unknown as { kv: { get: (k: string) => Promise<unknown> } }).kv;
  const get = kv.get.bind(kv);
  const asked: string[] = [];
  kv.get = (k) => (asked.push(k), get(k));
  const at = await a.checkpoints.read("r", 0);
  expect(asked.filter((k) => k.startsWith("m."))).toEqual([]);
  // b writes again before a claims on what it read: the claim is refused whatever a's watch showed.
  await b.checkpoints.save("r", 0, "b2");
  await expect(a.checkpoints.claim("r", 0, at.checkpoint!.state, at.basis)).rejects.toBeInstanceOf(FencedError);
  kv.get = get;
  expect(await a.checkpoints.load("r", 0)).toMatchObject({ state: "b2", owner: "b" });
});
