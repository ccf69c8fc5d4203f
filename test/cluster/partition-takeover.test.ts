/**
 * How a member applies a new assignment (server/partitioned-run.ts, rebalanceNow): the dead
 * members' partitions it is given are taken over at once, not one after the other; a take-over
 * whose claim another member's write beat is read and claimed again without holding the others
 * up; a partition is started once however many upload ticks come while its start is slow; and a
 * stop() in the middle of an apply stops and releases what that apply claimed; a partition released
 * while its sinks still hold results hands over the checkpoint last uploaded. The slow starts and
 * claims are promises the test resolves, so the order is fixed, not timed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assignPartitions, ClusterNode } from "../../lib/cluster/index.ts";
import { NodeMetrics } from "../../lib/core/metrics.ts";
import type { HeldRun } from "../../lib/server/lifecycle.ts";
import { PartitionedRun } from "../../lib/server/partitioned-run.ts";
import { checkpointStore } from "../../lib/store/checkpoint.ts";
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
  // A test that failed half-way leaves starts waiting: they end now, so that the runs can stop.
  for (const g of gates) g.open();
  for (const r of runs) await r.stop().catch(() => {});
  for (const n of nodes) await n.close().catch(() => {});
  await nats?.stop();
});

const until = (fn: () => boolean | Promise<boolean>, what: string | (() => string), ms = 15_000) => waitFor(fn, what, ms, 10);

async function connect(group: string, instance: string): Promise<ClusterNode> {
  const node = await ClusterNode.connect({ nats: [nats.url], group, instance, partitions: 12, heartbeatMs: 200, leaseMs: 1000, auth: GROUP_AUTH }, () => {});
  nodes.push(node);
  return node;
}

const gates: { open: () => void }[] = [];

/** A promise and its resolve. */
function gate(): { done: Promise<void>; open: () => void } {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  gates.push({ open });
  return { done, open };
}

/** A member's PartitionedRun over `partitions` whose partition starts wait for `gates` (the run's restored state is recorded in `events`). */
async function member(group: string, instance: string, partitions: number, gates: Map<number, ReturnType<typeof gate>>, events: string[], releaseWaitMs?: number) {
  const node = await connect(group, instance);
  await node.join(`http://${instance}`);
  const dataDir = mkdtempSync(join(tmpdir(), "floe-takeover-"));
  const run = new PartitionedRun({
    def: { id: "r", options: { qos: 1 } } as unknown as StoredRule,
    partitions,
    cluster: node,
    dataDir,
    onExit: () => {},
    exists: () => true,
    log: (l) => events.push(`log ${l}`),
    // Ticks come far more often than the slow starts end: none may start a partition being started.
    uploadEveryMs: 20,
    ...(releaseWaitMs !== undefined ? { releaseWaitMs } : {}),
    startPartition: async (p, epoch): Promise<HeldRun> => {
      events.push(`begin ${p} epoch ${epoch} from ${checkpointStore(dataDir).latest(`r.p${p}`) ?? "nothing"}`);
      await gates.get(p)?.done;
      events.push(`started ${p}`);
      return {
        nodes: () => [new NodeMetrics("source", "s")],
        topo: () => ({ sources: [], edges: {} }),
        stop: async () => void events.push(`stop ${p}`),
      };
    },
  });
  runs.push(run);
  return { node, run, dataDir };
}

const begun = (events: readonly string[]) => events.filter((e) => e.startsWith("begin ")).map((e) => Number(e.split(" ")[1]));

test("a member given two dead members' partitions begins both take-overs before either's slow start ends; a lost claim of a third is claimed again without waiting for them", async () => {
  const group = "takeover";
  // x and y owned partitions 0 and 1 and died (they never join: not live); nobody ever claimed 2.
  const x = await connect(group, "x");
  const y = await connect(group, "y");
  await x.checkpoints.claim("r", 0, "x-0", (await x.checkpoints.read("r", 0)).basis);
  await y.checkpoints.claim("r", 1, "y-1", (await y.checkpoints.read("r", 1)).basis);
  const events: string[] = [];
  const gates = new Map([0, 1, 2].map((p) => [p, gate()]));
  const a = await member(group, "a", 3, gates, events);
  // Partition 1's claim loses: y's last upload reaches the group between a's read and a's claim.
  const claim = a.node.checkpoints.claim.bind(a.node.checkpoints);
  let raced = false;
  a.node.checkpoints.claim = async (rule, p, state, basis) => {
    if (p === 1 && !raced) {
      raced = true;
      await y.checkpoints.save("r", 1, "y-1b");
    }
    return claim(rule, p, state, basis);
  };
  const opened = a.run.open();
  // Both of the others' take-overs are under way at once, neither finished.
  await until(() => begun(events).includes(0) && begun(events).includes(2), "two take-overs begun");
  expect(events).toContain("begin 0 epoch 2 from x-0");
  expect(events).toContain("begin 2 epoch 1 from nothing");
  await until(() => events.includes("log rule r: partition 1: partition 1: a newer owner claimed it; this member's write of epoch 2 was refused"), "partition 1's claim refused");
  // Partition 1 is read again (y's upload is the newest, y is not live) and claimed over it at
  // once, while the other two starts are still held.
  await until(() => begun(events).includes(1), "partition 1's take-over begun again");
  expect(events).toContain("begin 1 epoch 2 from y-1b");
  expect(events.some((e) => e.startsWith("started "))).toBe(false);
  // Ticks keep coming while the starts are held: still one start per partition.
  await Bun.sleep(100);
  expect(begun(events).sort()).toEqual([0, 1, 2]);
  gates.get(2)!.open();
  await until(() => events.includes("started 2"), "partition 2 started");
  expect(a.run.owned()).toEqual([2]);
  gates.get(0)!.open();
  gates.get(1)!.open();
  await opened;
  expect(a.run.owned()).toEqual([0, 1, 2]);
  await Bun.sleep(100);
  expect(begun(events).sort()).toEqual([0, 1, 2]);
  for (const p of [0, 1, 2]) expect((await x.checkpoints.load("r", p))?.owner).toBe("a");
  expect(events.filter((e) => e.startsWith("stop "))).toEqual([]);
}, 30_000);

test("stop() during an apply: the starts under way end, their runs stop, and every claim of the apply is released", async () => {
  const group = "takeover-stop";
  const events: string[] = [];
  const gates = new Map([[0, gate()]]);
  const b = await member(group, "b", 2, gates, events);
  // Partition 1's claim is slow: stop() comes while it is on its way to the server.
  const slowClaim = gate();
  const claim = b.node.checkpoints.claim.bind(b.node.checkpoints);
  b.node.checkpoints.claim = async (rule, p, state, basis) => {
    if (p === 1) await slowClaim.done;
    return claim(rule, p, state, basis);
  };
  const opened = b.run.open();
  await until(() => begun(events).includes(0), "partition 0's start begun");
  const stopped = b.run.stop();
  slowClaim.open();
  gates.get(0)!.open();
  await opened;
  await stopped;
  // Partition 0 started, then stopped with the rest; partition 1 was claimed but never started.
  expect(events.filter((e) => /^(begin|started|stop) /.test(e))).toEqual(["begin 0 epoch 1 from nothing", "started 0", "stop 0"]);
  expect(b.run.owned()).toEqual([]);
  // Both handed back: a next owner does not wait for a release that would never come.
  for (const p of [0, 1]) {
    const cp = await b.node.checkpoints.load("r", p);
    expect([cp?.owner, cp?.epoch, cp?.released]).toEqual(["b", 1, true]);
  }
}, 30_000);

test("a start that fails does not cut the others short: they finish within the apply, and the failed one is started again once, by a tick", async () => {
  const group = "takeover-fail";
  const events: string[] = [];
  const gates = new Map([0, 1, 2].map((p) => [p, gate()]));
  const c = await member(group, "c", 3, gates, events);
  // Partition 1's first start fails at once (a JetStream API request timing out on a starved member).
  const claim = c.node.checkpoints.claim.bind(c.node.checkpoints);
  let failed = false;
  c.node.checkpoints.claim = async (rule, p, state, basis) => {
    if (p === 1 && !failed) {
      failed = true;
      throw new Error("timeout");
    }
    return claim(rule, p, state, basis);
  };
  const opened = c.run.open();
  await until(() => begun(events).length === 2, "the two other starts begun");
  await until(() => events.includes("log rule r: timeout"), () => `the failure logged: ${events.join(" | ")}`);
  // While 0 and 2 are slow, ticks come and go: none starts 0 or 2 again, nor 1 before the apply is done.
  await Bun.sleep(150);
  expect(begun(events).sort()).toEqual([0, 2]);
  gates.get(0)!.open();
  gates.get(2)!.open();
  await opened;
  // The next tick finds partition 1 without a run and starts it.
  await until(() => begun(events).includes(1), "partition 1 started again");
  gates.get(1)!.open();
  await until(() => c.run.owned().length === 3, "all three running");
  await Bun.sleep(150);
  expect(begun(events).sort()).toEqual([0, 1, 2]);
}, 30_000);

test("a partition released while its sinks do not settle hands over the checkpoint last uploaded, not the one it stopped with", async () => {
  const group = "takeover-release";
  const node = await connect(group, "d");
  await node.join("http://d");
  const dataDir = mkdtempSync(join(tmpdir(), "floe-takeover-"));
  const local = checkpointStore(dataDir);
  const events: string[] = [];
  const run = new PartitionedRun({
    def: { id: "r", options: { qos: 1 } } as unknown as StoredRule,
    partitions: 2,
    cluster: node,
    dataDir,
    onExit: () => {},
    exists: () => true,
    log: (l) => events.push(l),
    uploadEveryMs: 20,
    startPartition: async (p): Promise<HeldRun> => ({
      nodes: () => [new NodeMetrics("source", "s")],
      topo: () => ({ sources: [], edges: {} }),
      // Partition 0's sinks deliver what they hold once its input is held; partition 1's do not within the hold.
      holdForSinks: async () => p === 0,
      resumeDrains: () => {},
      // The checkpoint a run stops with: taken whether its sinks are settled or not.
      stop: async () => local.save(`r.p${p}`, `stopped-${p}`, Date.now()),
    }),
  });
  runs.push(run);
  await run.open();
  expect(run.owned()).toEqual([0, 1]);
  for (const p of [0, 1]) local.save(`r.p${p}`, `settled-${p}`, Date.now());
  await until(async () => (await node.checkpoints.load("r", 0))?.state === "settled-0" && (await node.checkpoints.load("r", 1))?.state === "settled-1", "both uploaded");
  // At the release, partition 1's sinks still hold results the checkpoint it stops with may count.
  await run.stop();
  const [c0, c1] = [await node.checkpoints.load("r", 0), await node.checkpoints.load("r", 1)];
  expect([c0?.state, c0?.released]).toEqual(["stopped-0", true]);
  expect([c1?.state, c1?.released]).toEqual(["settled-1", true]);
  expect(events).toContain("rule r: partition 1: its sinks did not settle before it stopped; handing over the checkpoint last uploaded");
}, 30_000);

/** Partitions `of` owns among `live`. */
const ownedBy = (partitions: number, live: string[], of: string) => assignPartitions(partitions, live).get(of) ?? [];

test("a change of the live members ends a hand-over wait: the dead member's partition is taken over at once, not after the wait for a live holder's release", async () => {
  const group = "takeover-queued";
  const N = 6;
  // h holds every partition but x's and never releases them; x holds its own and leaves.
  const [h, x] = [await connect(group, "h"), await connect(group, "x")];
  await h.join("http://h");
  await x.join("http://x");
  for (let p = 0; p < N; p++) {
    const by = ownedBy(N, ["a", "h", "x"], "x").includes(p) ? x : h;
    await by.checkpoints.claim("r", p, `${by.instance}-${p}`, (await by.checkpoints.read("r", p)).basis);
  }
  const waiting = ownedBy(N, ["a", "h", "x"], "a");
  const gained = ownedBy(N, ["a", "h"], "a").filter((p) => ownedBy(N, ["a", "h", "x"], "x").includes(p));
  expect(waiting.length).toBeGreaterThan(0);
  expect(gained.length).toBeGreaterThan(0);
  const events: string[] = [];
  // The wait for h's releases would last a minute: the take-over must not queue behind it.
  const a = await member(group, "a", N, new Map(), events, 60_000);
  const opened = a.run.open();
  await until(() => a.node.members.liveIds().length === 3, "a sees h and x");
  await x.close();
  await until(() => gained.every((p) => begun(events).includes(p)), () => `x's partitions ${gained} taken over: ${events.join(" | ")}`);
  for (const p of gained) expect(events).toContain(`begin ${p} epoch 2 from x-${p}`);
  expect(begun(events).filter((p) => waiting.includes(p))).toEqual([]);
  // The apply after the change waits for h's releases again: one of them comes, and its partition starts from it.
  const [first] = waiting;
  await h.checkpoints.save("r", first!, `h-${first}-released`, true);
  await until(() => begun(events).includes(first!), `partition ${first} started once h released it`);
  expect(events).toContain(`begin ${first} epoch 2 from h-${first}-released`);
  await a.run.stop();
  await opened;
}, 30_000);

test("a partition moved away is released while the take-overs of the same change are still starting", async () => {
  const group = "takeover-release-moved";
  const N = 6;
  // A member x whose death gives b one of x's partitions and moves one of b's to y.
  const gains = (xi: string) => ownedBy(N, ["b", "y"], "b").filter((p) => ownedBy(N, ["b", xi, "y"], xi).includes(p));
  const moves = (xi: string) => ownedBy(N, ["b", xi, "y"], "b").filter((p) => ownedBy(N, ["b", "y"], "y").includes(p));
  const xi = Array.from({ length: 200 }, (_, i) => `x${i}`).find((n) => gains(n).length > 0 && moves(n).length > 0)!;
  expect(xi).toBeDefined();
  const [x, y] = [await connect(group, xi), await connect(group, "y")];
  await x.join(`http://${xi}`);
  await y.join("http://y");
  for (const p of ownedBy(N, ["b", xi, "y"], xi)) await x.checkpoints.claim("r", p, `x-${p}`, (await x.checkpoints.read("r", p)).basis);
  const events: string[] = [];
  // The take-overs of x's partitions are slow: held until the test opens them.
  const gates = new Map(gains(xi).map((p) => [p, gate()]));
  const b = await member(group, "b", N, gates, events);
  await until(() => b.node.members.liveIds().length === 3, "b sees x and y");
  await b.run.open();
  for (const p of moves(xi)) expect(b.run.owned()).toContain(p);
  await x.close();
  await until(() => gains(xi).every((p) => begun(events).includes(p)), "x's partitions being taken over");
  for (const p of moves(xi)) await until(async () => (await b.node.checkpoints.load("r", p))?.released === true, `partition ${p} released for y`);
  for (const p of moves(xi)) expect(events).toContain(`stop ${p}`);
  expect(events.some((e) => e.startsWith("started ") && gains(xi).includes(Number(e.split(" ")[1])))).toBe(false);
  for (const g of gates.values()) g.open();
  await until(() => gains(xi).every((p) => b.run.owned().includes(p)), "x's partitions running on b");
}, 30_000);

test("a take-over does not wait behind the uploads of a tick: they go on beside it, and a release waits for its partition's", async () => {
  const group = "takeover-upload";
  const N = 4;
  const x = await connect(group, "x");
  await x.join("http://x");
  const mine = ownedBy(N, ["a", "x"], "a");
  const xs = ownedBy(N, ["a", "x"], "x");
  for (const p of xs) await x.checkpoints.claim("r", p, `x-${p}`, (await x.checkpoints.read("r", p)).basis);
  const events: string[] = [];
  const a = await member(group, "a", N, new Map(), events);
  await until(() => a.node.members.liveIds().length === 2, "a sees x");
  await a.run.open();
  expect(a.run.owned()).toEqual(mine);
  // The uploads of a's partitions hang on their way to the server.
  const slow = gate();
  const save = a.node.checkpoints.save.bind(a.node.checkpoints);
  let held = 0;
  const writes: string[] = [];
  a.node.checkpoints.save = async (rule, p, state, released) => {
    if (!released) {
      held++;
      await slow.done;
    }
    writes.push(`${released ? "release" : "upload"} ${p}`);
    return save(rule, p, state, released);
  };
  for (const p of mine) checkpointStore(a.dataDir).save(`r.p${p}`, `a-${p}`, Date.now());
  await until(() => held === mine.length, "every upload of a's partitions under way");
  await x.close();
  await until(() => xs.every((p) => a.run.owned().includes(p)), () => `x's partitions taken over while the uploads hang: ${events.join(" | ")}`);
  for (const p of xs) expect(events).toContain(`begin ${p} epoch 2 from x-${p}`);
  // Each partition's upload is one at a time: later ticks began none beside the hanging ones.
  expect(held).toBe(mine.length);
  // stop() releases a's partitions once their uploads ended (two writes of one ownership at once would fence each other).
  const stopped = a.run.stop();
  slow.open();
  await stopped;
  for (const p of mine) expect(writes.indexOf(`release ${p}`)).toBeGreaterThan(writes.indexOf(`upload ${p}`));
  expect(writes.filter((w) => w.startsWith("upload ")).length).toBe(mine.length);
  for (const p of mine) expect(await a.node.checkpoints.load("r", p)).toMatchObject({ state: `a-${p}`, owner: "a", released: true });
}, 30_000);
