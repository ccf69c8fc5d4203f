/**
 * The group's shared definitions and per-partition checkpoints, member by member in one process
 * over a real NATS server: convergence on the last write, no echo, seeding and catch-up, and a
 * checkpoint saved by one owner restored by the next after the first one dies.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterNode, DefinitionSync, EntrySigner, groupSecret, RefusalLog, type DefinitionChange, type ReplicatedStore } from "../../lib/cluster/index.ts";
import { connectGroup, openBucket, type KV } from "../../lib/cluster/nats.ts";
import type { ClusterSettings } from "../../lib/config/kuiper.ts";
import { Kv } from "../../lib/store/kv.ts";
import { GROUP_AUTH, NatsServer } from "../helpers/nats.ts";
import { waitFor } from "../helpers/runtime.ts";

let nats: NatsServer;
const open: ClusterNode[] = [];

beforeAll(async () => {
  nats = await NatsServer.start();
});

// A test that stopped the server and failed before restarting it must not take the next ones down.
afterEach(async () => {
  if (!nats.running) await nats.restart();
});

afterAll(async () => {
  for (const n of open) await n.close().catch(() => {});
  await nats?.stop();
});

function settings(group: string, instance: string): ClusterSettings {
  return { nats: [nats.url], group, instance, partitions: 12, heartbeatMs: 200, leaseMs: 1000, auth: GROUP_AUTH };
}

interface Member {
  node: ClusterNode;
  store: ReplicatedStore;
  local: Kv;
  /** Changes that reached the applier and differed from the local copy. */
  applied: DefinitionChange[];
}

/** A member whose "engine" writes a group change into its store (quietly), as server/cluster-apply.ts does. */
async function member(group: string, instance: string, local = new Kv(join(mkdtempSync(join(tmpdir(), "floe-sync-")), "kv.db"))): Promise<Member> {
  const node = await ClusterNode.connect(settings(group, instance), () => {});
  open.push(node);
  const store = await node.replicate(local);
  const m: Member = { node, store, local, applied: [] };
  node.definitions.attach((c) => {
    if (store.get(c.ns, c.key) === c.value) return;
    m.applied.push(c);
    store.quietly(() => (c.value === undefined ? store.delete(c.ns, c.key) : store.set(c.ns, c.key, c.value)));
  });
  return m;
}

const until = (fn: () => boolean | Promise<boolean>, ms = 15_000) => waitFor(fn, "the condition", ms, 20);

test("members converge on the last write of a key written by both at once", async () => {
  const a = await member("conv", "a");
  const b = await member("conv", "b");
  for (let i = 0; i < 20; i++) {
    a.store.set("rule", "r", `a${i}`);
    b.store.set("rule", "r", `b${i}`);
  }
  await Promise.all([a.node.definitions.flush(), b.node.definitions.flush()]);
  await until(() => a.local.get("rule", "r") === b.local.get("rule", "r")).catch((e) => {
    throw new Error(`${e}: a holds ${a.local.get("rule", "r")}, b holds ${b.local.get("rule", "r")}, unsent ${a.node.definitions.unsentCount}/${b.node.definitions.unsentCount}`);
  });
  // Whichever came last in the bucket, both hold it and it is one of the final writes.
  expect(["a19", "b19"]).toContain(a.local.get("rule", "r")!);
  await Bun.sleep(200);
  expect(a.local.get("rule", "r")).toBe(b.local.get("rule", "r")!);
});

test("a member whose watch lags behind both members' writes converges all the same (its own echoes are overwritten before it sees them)", async () => {
  // The bucket keeps five revisions per key: a watch that starts late (as a slow or reset one does)
  // never sees the older revisions overwritten meanwhile (the first one it sees does not follow
  // what it saw before, and is refused). b's watch is held until both bursts are stored.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const lagging = (kv: KV): KV =>
    new Proxy(kv, {
      get(t, p) {
        if (p === "watch")
          return async (o: Parameters<KV["watch"]>[0]) => {
            let w: Awaited<ReturnType<KV["watch"]>> | undefined;
            return {
              stop: () => w?.stop(),
              async *[Symbol.asyncIterator]() {
                await held;
                w = await t.watch(o);
                yield* w;
              },
            };
          };
        const v = Reflect.get(t, p) as unknown;
        return typeof v === "function" ? v.bind(t) : v;
      },
    });
  const a = await member("lag", "a");
  const nc = await connectGroup([nats.url], { servers: [nats.url], name: "lag-b" });
  const sync = new DefinitionSync(lagging(await openBucket(nc, "floe_lag")), "b", new EntrySigner(groupSecret(GROUP_AUTH)), new RefusalLog(() => {}), () => {});
  const local = new Kv(join(mkdtempSync(join(tmpdir(), "floe-sync-")), "kv.db"));
  const store = await sync.open(local);
  sync.attach((c) => {
    if (store.get(c.ns, c.key) !== c.value) store.quietly(() => (c.value === undefined ? store.delete(c.ns, c.key) : store.set(c.ns, c.key, c.value)));
  });
  try {
    for (let i = 0; i < 20; i++) {
      store.set("rule", "r", `b${i}`);
      await sync.flush();
      a.store.set("rule", "r", `a${i}`);
    }
    await a.node.definitions.flush();
    release();
    await until(() => local.get("rule", "r") === "a19", 5000).catch((e) => {
      throw new Error(`${e}: a holds ${a.local.get("rule", "r")}, b holds ${local.get("rule", "r")}`);
    });
    expect(a.local.get("rule", "r")).toBe("a19");
  } finally {
    sync.stop();
    await nc.close();
  }
});

test("own writes do not come back as changes, even when made in quick succession", async () => {
  const a = await member("echo", "a");
  const b = await member("echo", "b");
  for (let i = 0; i < 50; i++) a.store.set("stream", "s", `v${i}`);
  a.store.transaction(() => {
    a.store.delete("stream", "s");
    a.store.set("tempStream", "s", "t");
  });
  await a.node.definitions.flush();
  await until(() => b.local.get("tempStream", "s") === "t" && b.local.get("stream", "s") === undefined);
  await a.node.definitions.settled();
  await Bun.sleep(100);
  expect(a.applied).toEqual([]);
  // b applied only what it did not have; never an older value after a newer one.
  const seen = b.applied.filter((c) => c.ns === "stream" && c.value !== undefined).map((c) => Number(c.value!.slice(1)));
  expect(seen).toEqual([...seen].sort((x, y) => x - y));
  // Per-instance namespaces stay local.
  a.store.set("meta", "m", "1");
  a.store.set("asyncTask", "t", "{}");
  await a.node.definitions.flush();
  await Bun.sleep(100);
  expect([b.local.get("meta", "m"), b.local.get("asyncTask", "t")]).toEqual([undefined, undefined]);
});

test("the first member seeds a new group; a later one gives up its local-only definitions for the group's", async () => {
  const dirA = new Kv(join(mkdtempSync(join(tmpdir(), "floe-sync-")), "kv.db"));
  dirA.set("stream", "s1", "one");
  dirA.set("rule", "r1", "rule one");
  const a = await member("seed", "a", dirA);
  const dirB = new Kv(join(mkdtempSync(join(tmpdir(), "floe-sync-")), "kv.db"));
  dirB.set("stream", "s1", "stale");
  dirB.set("stream", "mine", "only here");
  await a.node.definitions.flush();
  const b = await member("seed", "b", dirB);
  expect(b.local.entries("stream")).toEqual([["s1", "one"]]);
  expect(b.local.entries("rule")).toEqual([["r1", "rule one"]]);
  expect(a.local.entries("stream")).toEqual([["s1", "one"]]);
});

test("a member that was away catches up with what changed meanwhile, deletes included", async () => {
  const a = await member("catch", "a");
  const kvB = new Kv(join(mkdtempSync(join(tmpdir(), "floe-sync-")), "kv.db"));
  let b = await member("catch", "b", kvB);
  a.store.set("rule", "r1", "1");
  a.store.set("rule", "r2", "2");
  await a.node.definitions.flush();
  await until(() => kvB.get("rule", "r2") === "2");
  await b.node.close();
  a.store.delete("rule", "r1");
  a.store.set("rule", "r2", "2b");
  a.store.set("rule", "r3", "3");
  await a.node.definitions.flush();
  b = await member("catch", "b", kvB);
  expect(kvB.entries("rule")).toEqual([
    ["r2", "2b"],
    ["r3", "3"],
  ]);
});

test("a checkpoint saved by a partition's owner is restored by the member that takes the partition over after it dies", async () => {
  const a = await member("ckpt", "a");
  const b = await member("ckpt", "b");
  await a.node.join("http://a");
  await b.node.join("http://b");
  await until(() => a.node.members.liveIds().length === 2 && b.node.members.liveIds().length === 2);
  const p = a.node.owned()[0]!;
  expect(b.node.owned()).not.toContain(p);
  // Larger than one message: stored in chunks behind one manifest.
  const state = JSON.stringify({ window: "x".repeat(2_500_000), watermark: 1234 });
  await a.node.checkpoints.claim("rule/1", p, "", (await a.node.checkpoints.read("rule/1", p)).basis);
  await a.node.checkpoints.save("rule/1", p, state);
  await a.node.checkpoints.save("rule/1", p, state + " ");
  await a.node.checkpoints.claim("rule/1", (p + 1) % 12, "other", (await a.node.checkpoints.read("rule/1", (p + 1) % 12)).basis);
  // a dies without leaving: no heartbeat, no goodbye.
  a.node.members.stopTimers();
  await a.node.nc.close();
  const took = await until(() => b.node.owned().includes(p), 5000);
  expect(took).toBeLessThan(1000 + 200 + 500);
  const got = await b.node.checkpoints.load("rule/1", p);
  expect(got?.state).toBe(state + " ");
  expect([got?.owner, got?.epoch]).toEqual(["a", 1]);
  expect(await b.node.checkpoints.partitions("rule/1")).toEqual([p, (p + 1) % 12].sort((x, y) => x - y));
  expect(await b.node.checkpoints.load("rule/2", p)).toBeUndefined();
  await b.node.checkpoints.claim("rule/1", p, "b's", (await b.node.checkpoints.read("rule/1", p)).basis);
  const next = await b.node.checkpoints.load("rule/1", p);
  expect([next?.owner, next?.epoch, next?.state]).toEqual(["b", 2, "b's"]);
  await b.node.checkpoints.clear("rule/1");
  expect(await b.node.checkpoints.partitions("rule/1")).toEqual([]);
}, 20_000);

test("a write made while NATS is away reaches the group once it is back; a member cut off gives its partitions up", async () => {
  const a = await member("away", "a");
  const b = await member("away", "b");
  await a.node.join("http://a");
  await b.node.join("http://b");
  await until(() => a.node.members.liveIds().length === 2 && b.node.members.liveIds().length === 2);
  await nats.stop();
  // Away means the client has seen the connection drop (a put sent before that waits for its answer).
  await until(() => !a.node.definitions.isConnected, 5000);
  a.store.set("rule", "while-away", "1");
  // A REST call does not hang on the group while NATS is away.
  const t0 = Date.now();
  await a.node.definitions.caughtUp();
  await a.node.definitions.flush();
  expect(Date.now() - t0).toBeLessThan(500);
  await until(() => a.node.definitions.unsentCount === 1, 10_000);
  // Without stored heartbeats for a lease (1 s here) a member no longer counts itself in.
  await until(() => a.node.owned().length === 0, 3000);
  await nats.restart();
  await until(() => b.local.get("rule", "while-away") === "1", 10_000);
  expect(a.node.definitions.unsentCount).toBe(0);
  await until(() => a.node.members.liveIds().length === 2 && b.node.members.liveIds().length === 2, 10_000);
  expect([...a.node.owned(), ...b.node.owned()].sort((x, y) => x - y)).toEqual([...Array(12).keys()]);
  // And the watch works again after the restart.
  b.store.set("rule", "after", "2");
  await until(() => a.local.get("rule", "after") === "2", 5000);
}, 30_000);

test("with the default heartbeat (1 s) and lease (6 s) a dead member's partitions move within 10 s", async () => {
  const dflt = (instance: string): ClusterSettings => ({ ...settings("dflt", instance), heartbeatMs: 1000, leaseMs: 6000 });
  const a = await ClusterNode.connect(dflt("a"), () => {});
  const b = await ClusterNode.connect(dflt("b"), () => {});
  open.push(a, b);
  await a.join("http://a");
  await b.join("http://b");
  await until(() => a.members.liveIds().length === 2 && b.members.liveIds().length === 2);
  expect(b.owned().length).toBeLessThan(12);
  a.members.stopTimers();
  await a.nc.close();
  const took = await until(() => b.owned().length === 12, 12_000);
  expect(took).toBeLessThan(10_000);
  expect(took).toBeGreaterThan(4_000);
}, 30_000);
