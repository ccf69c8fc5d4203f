/**
 * A partition started with no checkpoint in the group (a new rule, or a take-over before the dead
 * owner's first upload) is claimed in the group's store first: a member joining meanwhile waits
 * for the current owner's release instead of starting the partition while it still runs there
 * (two runs would read one JetStream durable and split its messages between two states).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterNode } from "../../lib/cluster/index.ts";
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

/** Set at teardown: the runs left then stop at once (12 slow stops in a row took 3.6 s). */
let tearingDown = false;

afterAll(async () => {
  tearingDown = true;
  for (const r of runs) await r.stop().catch(() => {});
  for (const n of nodes) await n.close().catch(() => {});
  await nats?.stop();
});

const until = (fn: () => boolean, ms = 15_000) => waitFor(fn, "the condition", ms, 20);

test("a member joining waits for the release of a partition that has no group checkpoint yet", async () => {
  const events: string[] = [];
  const member = async (instance: string) => {
    const node = await ClusterNode.connect({ nats: [nats.url], group: "claim", instance, partitions: 12, heartbeatMs: 200, leaseMs: 1000, auth: GROUP_AUTH }, () => {});
    nodes.push(node);
    await node.join(`http://${instance}`);
    const run = new PartitionedRun({
      def: { id: "r", options: { qos: 1 } } as unknown as StoredRule,
      partitions: 12,
      cluster: node,
      // No run here ever checkpoints: every partition stays without a group checkpoint of its state.
      dataDir: mkdtempSync(join(tmpdir(), "floe-claim-")),
      onExit: () => {},
      exists: () => true,
      log: () => {},
      startPartition: async (p) => {
        events.push(`start ${instance} ${p}`);
        return {
          nodes: () => [new NodeMetrics("source", "s")],
          topo: () => ({ sources: [], edges: {} }),
          // Stopping takes a while (a final checkpoint, acknowledgements), as a real run's does.
          stop: async () => {
            if (!tearingDown) await Bun.sleep(300);
            events.push(`stop ${instance} ${p}`);
          },
        };
      },
    });
    runs.push(run);
    await run.open();
    return { node, run };
  };
  const a = await member("a");
  expect(a.run.owned()).toHaveLength(12);
  const b = await member("b");
  await until(() => b.node.members.liveIds().length === 2 && a.node.members.liveIds().length === 2 && b.run.owned().length > 0 && a.run.owned().length + b.run.owned().length === 12);
  for (const p of b.run.owned()) {
    const stopped = events.indexOf(`stop a ${p}`);
    expect(stopped).toBeGreaterThanOrEqual(0);
    expect(events.indexOf(`start b ${p}`)).toBeGreaterThan(stopped);
  }
}, 30_000);
