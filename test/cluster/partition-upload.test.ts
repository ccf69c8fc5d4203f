/**
 * A partition's local checkpoint goes to the group only while its sinks are settled
 * (lib/server/partitioned-run.ts, uploadAll): a checkpoint may already count windows whose results
 * still wait in a sink, and the next owner, restored from it, would not make them again. Sinks
 * busy at every tick for a while get the partition's input held until they settle.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterNode } from "../../lib/cluster/index.ts";
import { NodeMetrics } from "../../lib/core/metrics.ts";
import { PartitionedRun, partitionRunId } from "../../lib/server/partitioned-run.ts";
import { checkpointStore } from "../../lib/store/checkpoint.ts";
import type { StoredRule } from "../../lib/store/stored-rule.ts";
import type { HeldRun } from "../../lib/server/lifecycle.ts";
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

/** The only member of group `group` running rule r's `partitions` partitions, `run(p)` as partition p's run. */
async function member(group: string, run: HeldRun | ((p: number) => HeldRun), partitions = 1): Promise<{ node: ClusterNode; runs: PartitionedRun; dataDir: string }> {
  const node = await ClusterNode.connect({ nats: [nats.url], group, instance: "a", partitions, heartbeatMs: 200, leaseMs: 1000, auth: GROUP_AUTH }, () => {});
  nodes.push(node);
  await node.join("http://a");
  const dataDir = mkdtempSync(join(tmpdir(), "floe-upload-"));
  const r = new PartitionedRun({
    def: { id: "r", options: { qos: 1 } } as unknown as StoredRule,
    partitions,
    cluster: node,
    dataDir,
    onExit: () => {},
    exists: () => true,
    log: () => {},
    uploadEveryMs: 50,
    startPartition: async (p) => (typeof run === "function" ? run(p) : run),
  });
  runs.push(r);
  await r.open();
  expect(r.owned()).toEqual([...Array(partitions).keys()]);
  return { node, runs: r, dataDir };
}

const groupState = async (node: ClusterNode, p = 0) => (await node.checkpoints.load("r", p))?.state;

test("no upload while the partition's sinks hold results; the checkpoint goes up once they are settled", async () => {
  let settled = false;
  const m = await member("upload", { nodes: () => [new NodeMetrics("sink", "nats_0")], topo: () => ({ sources: [], edges: {} }), sinksSettled: () => settled, stop: async () => {} });
  // The run checkpoints while its sink still holds results of the windows the checkpoint counts.
  checkpointStore(m.dataDir).save(partitionRunId("r", 0), "state-1", Date.now());
  await waitFor(() => m.runs.unsettledTicks >= 4, "upload ticks with the sinks busy", 5000, 20);
  expect(await groupState(m.node)).toBe("");
  settled = true;
  await waitFor(async () => (await groupState(m.node)) === "state-1", "the upload once settled", 5000, 20);
  expect(m.runs.heldUploads).toBe(0);
}, 20_000);

test("sinks never settled on their own: after a while the partition's input is held until they are, the checkpoint goes up, the input goes on", async () => {
  const events: string[] = [];
  let holding = false;
  const m = await member("upload2", {
    nodes: () => [new NodeMetrics("sink", "nats_0")],
    topo: () => ({ sources: [], edges: {} }),
    // Results keep coming while input is processed; held, the sinks drain.
    sinksSettled: () => holding,
    holdForSinks: async () => {
      events.push("hold");
      holding = true;
      return true;
    },
    resumeDrains: () => {
      if (holding) events.push("resume");
      holding = false;
    },
    stop: async () => {},
  });
  checkpointStore(m.dataDir).save(partitionRunId("r", 0), "state-2", Date.now());
  const t0 = Date.now();
  await waitFor(async () => (await groupState(m.node)) === "state-2", "the upload after holding the input", 10_000, 20);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
  expect(m.runs.heldUploads).toBe(1);
  expect(events).toEqual(["hold", "resume"]);
  expect(holding).toBe(false);
}, 20_000);

test("a member short of CPU: its partitions' sinks settle only while all its partitions are held; all are held at once and each uploads", async () => {
  // Each partition's sinks drain only when the member's other partitions stop reading too (on a
  // quarter of a core, the partitions still reading take the CPU the held one's sinks need).
  const holding = new Set<number>();
  const events: string[] = [];
  const run = (p: number): HeldRun => ({
    nodes: () => [new NodeMetrics("sink", "nats_0")],
    topo: () => ({ sources: [], edges: {} }),
    sinksSettled: () => holding.size === 3,
    holdForSinks: async (maxMs) => {
      events.push(`hold ${p}`);
      holding.add(p);
      const until = Date.now() + maxMs;
      while (holding.size < 3 && Date.now() < until) await Bun.sleep(5);
      return holding.size === 3;
    },
    resumeDrains: () => {
      if (holding.delete(p)) events.push(`resume ${p}`);
    },
    stop: async () => {},
  });
  const m = await member("upload3", run, 3);
  for (const p of [0, 1, 2]) checkpointStore(m.dataDir).save(partitionRunId("r", p), `state-3.${p}`, Date.now());
  await waitFor(async () => (await Promise.all([0, 1, 2].map((p) => groupState(m.node, p)))).every((s, p) => s === `state-3.${p}`), "every partition's upload", 10_000, 20);
  expect(m.runs.heldUploads).toBe(3);
  expect(events.slice(0, 6).sort()).toEqual(["hold 0", "hold 1", "hold 2", "resume 0", "resume 1", "resume 2"]);
  // Every hold began before any resumed: the member's input was held as a whole.
  expect(events.slice(0, 3).every((e) => e.startsWith("hold"))).toBe(true);
  expect(holding.size).toBe(0);
}, 20_000);
