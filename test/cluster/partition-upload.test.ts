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

/** One member of group `group` running partition 0 of rule r with `run` as the partition's run. */
async function member(group: string, run: HeldRun): Promise<{ node: ClusterNode; runs: PartitionedRun; dataDir: string }> {
  const node = await ClusterNode.connect({ nats: [nats.url], group, instance: "a", partitions: 1, heartbeatMs: 200, leaseMs: 1000, auth: GROUP_AUTH }, () => {});
  nodes.push(node);
  await node.join("http://a");
  const dataDir = mkdtempSync(join(tmpdir(), "floe-upload-"));
  const r = new PartitionedRun({
    def: { id: "r", options: { qos: 1 } } as unknown as StoredRule,
    partitions: 1,
    cluster: node,
    dataDir,
    onExit: () => {},
    exists: () => true,
    log: () => {},
    uploadEveryMs: 50,
    startPartition: async () => run,
  });
  runs.push(r);
  await r.open();
  expect(r.owned()).toEqual([0]);
  return { node, runs: r, dataDir };
}

const groupState = async (node: ClusterNode) => (await node.checkpoints.load("r", 0))?.state;

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
