/**
 * A partition's local checkpoint goes to the group only while its sinks are settled
 * (lib/server/partitioned-run.ts, uploadAll): a checkpoint may already count windows whose results
 * still wait in a sink, and the next owner, restored from it, would not make them again.
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
import { GROUP_AUTH, NatsServer } from "../helpers/nats.ts";
import { waitFor } from "../helpers/runtime.ts";

let nats: NatsServer;
let node: ClusterNode | undefined;
let run: PartitionedRun | undefined;

beforeAll(async () => {
  nats = await NatsServer.start();
});

afterAll(async () => {
  await run?.stop().catch(() => {});
  await node?.close().catch(() => {});
  await nats?.stop();
});

test("no upload while the partition's sinks hold results; the checkpoint goes up once they are settled", async () => {
  node = await ClusterNode.connect({ nats: [nats.url], group: "upload", instance: "a", partitions: 1, heartbeatMs: 200, leaseMs: 1000, auth: GROUP_AUTH }, () => {});
  await node.join("http://a");
  const dataDir = mkdtempSync(join(tmpdir(), "floe-upload-"));
  let settled = false;
  run = new PartitionedRun({
    def: { id: "r", options: { qos: 1 } } as unknown as StoredRule,
    partitions: 1,
    cluster: node,
    dataDir,
    onExit: () => {},
    exists: () => true,
    log: () => {},
    uploadEveryMs: 50,
    startPartition: async () => ({
      nodes: () => [new NodeMetrics("sink", "nats_0")],
      topo: () => ({ sources: [], edges: {} }),
      sinksSettled: () => settled,
      stop: async () => {},
    }),
  });
  await run.open();
  expect(run.owned()).toEqual([0]);
  // The run checkpoints while its sink still holds results of the windows the checkpoint counts.
  checkpointStore(dataDir).save(partitionRunId("r", 0), "state-1", Date.now());
  await waitFor(() => run!.unsettledTicks >= 4, "upload ticks with the sinks busy", 5000, 20);
  expect((await node.checkpoints.load("r", 0))?.state).toBe("");
  settled = true;
  const cluster = node;
  let state: string | undefined;
  await waitFor(async () => (state = (await cluster.checkpoints.load("r", 0))?.state) === "state-1", "the upload once settled", 5000, 20);
  expect(state).toBe("state-1");
}, 20_000);
