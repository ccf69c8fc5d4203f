/**
 * A rebalance hands a partition over with the state its live owner stops with, even when that
 * owner took the partition over itself and has not uploaded a checkpoint of its own since: the
 * group's checkpoint then still names the previous owner (a member killed earlier that now comes
 * back under the same instance id, or one whose last word was a release). Seen flaky in
 * partitioned.test.ts under load: the killed member rejoined, found its own stale checkpoint in
 * the group, took it for its own newest and did not wait for the survivor's release.
 *
 * The survivor's periodic upload is switched off here (the lag a loaded machine produces), so the
 * group holds nothing newer than the take-over until the release, and a run takes a while to stop,
 * so the new owner reads the group's checkpoint before the release is there.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterNode } from "../../lib/cluster/index.ts";
import { ownerOf } from "../../lib/cluster/assignment.ts";
import { NodeMetrics } from "../../lib/core/metrics.ts";
import { PartitionedRun } from "../../lib/server/partitioned-run.ts";
import { partitionRunId } from "../../lib/server/partitioned-stream.ts";
import { checkpointStore } from "../../lib/store/checkpoint.ts";
import type { StoredRule } from "../../lib/store/stored-rule.ts";
import { GROUP_AUTH, NatsServer } from "../helpers/nats.ts";
import { waitFor } from "../helpers/runtime.ts";

let nats: NatsServer;
const nodes: ClusterNode[] = [];
const runs: PartitionedRun[] = [];
const PARTITIONS = 4;

beforeAll(async () => {
  nats = await NatsServer.start();
});

/** Set at teardown: the runs left then stop at once (eight slow stops in a row took 8 s). */
let tearingDown = false;

afterAll(async () => {
  tearingDown = true;
  for (const r of runs) await r.stop().catch(() => {});
  for (const n of nodes) await n.close().catch(() => {});
  await nats?.stop();
});

const until = (fn: () => boolean, ms = 15_000) => waitFor(fn, "the condition", ms, 20);

async function connect(group: string, instance: string): Promise<ClusterNode> {
  const node = await ClusterNode.connect({ nats: [nats.url], group, instance, partitions: PARTITIONS, heartbeatMs: 200, leaseMs: 1000, auth: GROUP_AUTH }, () => {});
  nodes.push(node);
  return node;
}

/** A member running rule `r`; `work(p)` is the state its run of `p` checkpoints locally once started. */
async function member(group: string, instance: string, work?: (p: number) => string) {
  const node = await connect(group, instance);
  await node.join(`http://${instance}`);
  const dataDir = mkdtempSync(join(tmpdir(), "floe-handover-"));
  /** The state each run started from (what the take-over restored), by partition. */
  const restored = new Map<number, string | undefined>();
  const run = new PartitionedRun({
    def: { id: "r", options: { qos: 1 } } as unknown as StoredRule,
    partitions: PARTITIONS,
    cluster: node,
    dataDir,
    onExit: () => {},
    exists: () => true,
    log: () => {},
    // No periodic upload: only the take-over and the release write to the group.
    uploadEveryMs: 3_600_000,
    releaseWaitMs: 10_000,
    startPartition: async (p) => {
      const local = checkpointStore(dataDir);
      restored.set(p, local.latest(partitionRunId("r", p)));
      // The run reads on and checkpoints locally; its state differs from what it restored.
      if (work) local.save(partitionRunId("r", p), work(p), Date.now());
      return {
        nodes: () => [new NodeMetrics("source", "s")],
        topo: () => ({ sources: [], edges: {} }),
        // Stopping takes a while (a final checkpoint, acknowledgements): the new owner looks at the group meanwhile.
        stop: () => Bun.sleep(tearingDown ? 0 : 1000),
      };
    },
  });
  runs.push(run);
  await run.open();
  return { node, run, restored };
}

for (const [name, seeder, released] of [
  ["a killed member rejoining does not take its own stale checkpoint for the newest", "a", false],
  ["a release from an earlier ownership does not end the wait for the current owner's", "z", true],
] as const) {
  test(name, async () => {
    const group = `ho${released ? 1 : 0}`;
    // The group's checkpoints as the earlier owner left them (killed, or released).
    const old = await connect(group, seeder);
    for (let p = 0; p < PARTITIONS; p++) {
      await old.checkpoints.claim("r", p, "", (await old.checkpoints.read("r", p)).basis);
      await old.checkpoints.save("r", p, `old-${p}`, released);
    }
    // The survivor takes every partition over from them and reads on.
    const b = await member(group, "b", (p) => `b-${p}`);
    expect(b.run.owned()).toHaveLength(PARTITIONS);
    for (let p = 0; p < PARTITIONS; p++) expect(b.restored.get(p)).toBe(`old-${p}`);
    // "a" (back with a fresh data dir, or new) wins some partitions from the live survivor.
    const a = await member(group, "a");
    const mine = [...Array(PARTITIONS).keys()].filter((p) => ownerOf(p, PARTITIONS, ["a", "b"]) === "a");
    expect(mine.length).toBeGreaterThan(0);
    await until(() => a.run.owned().join() === mine.join());
    // Each starts from the state the survivor stopped with, not from the older one.
    for (const p of mine) expect(a.restored.get(p)).toBe(`b-${p}`);
  }, 30_000);
}
