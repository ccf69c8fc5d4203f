/**
 * A partition's local checkpoints go to the group as they are stored (lib/server/partitioned-run.ts,
 * uploadAll): a partition run stores one only once its sinks delivered every result the snapshot
 * counts (the checkpoint barrier, test/runtime/partition-barrier.test.ts), so no upload waits for
 * the sinks and no partition's input is held for one, however busy its sinks are.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterNode } from "../../lib/cluster/index.ts";
import { NodeMetrics } from "../../lib/core/metrics.ts";
import { PartitionedRun } from "../../lib/server/partitioned-run.ts";
import { partitionRunId } from "../../lib/server/partitioned-stream.ts";
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

test("each partition's newest local checkpoint goes to the group at the next tick, while its sinks are never idle", async () => {
  const run = (): HeldRun => ({ nodes: () => [new NodeMetrics("sink", "nats_0")], topo: () => ({ sources: [], edges: {} }), stop: async () => {} });
  const m = await member("upload", run, 3);
  const local = checkpointStore(m.dataDir);
  for (const p of [0, 1, 2]) local.save(partitionRunId("r", p), `state-1.${p}`, Date.now());
  const all = async (v: string) => (await Promise.all([0, 1, 2].map((p) => groupState(m.node, p)))).every((s, p) => s === `${v}.${p}`);
  await waitFor(() => all("state-1"), "every partition's upload", 5000, 20);
  // A newer one follows; an unchanged one is not written again (its save time stays).
  const ts = (await m.node.checkpoints.load("r", 1))!.ts;
  local.save(partitionRunId("r", 0), "state-2.0", Date.now());
  await waitFor(async () => (await groupState(m.node, 0)) === "state-2.0", "the newer upload", 5000, 20);
  await Bun.sleep(150);
  expect((await m.node.checkpoints.load("r", 1))!.ts).toBe(ts);
}, 20_000);
