/**
 * The source hub (runtime/sources.ts): rules reading one SHARED stream share its connector, and
 * the runs of a partitioned SHARED stream's partitions do not — each reads its own partition,
 * though their streams come from the same CREATE statement.
 */
import { expect, test } from "bun:test";
import { streamsForPartition } from "../../lib/server/partitioned-run.ts";
import { metric, streams, testRuntime, waitFor } from "../helpers/runtime.ts";

test("a SHARED stream is one source for every rule reading it, and one per partition of a partitioned one", async () => {
  const t = testRuntime();
  const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="part/{partition}", SHARED="true")`);
  const s = defs.get("s")!;
  const rule = (id: string, p: number) => t.rule({ id, sql: "SELECT n FROM s", actions: [{ nop: {} }] }, streamsForPartition(defs, s, p)).start();
  const runs = [await rule("p0", 0), await rule("p1", 1), await rule("p1b", 1)];
  try {
    await t.env.pubsub.publish("part/0", { n: 0 });
    await t.env.pubsub.publish("part/1", { n: 1 });
    await t.env.pubsub.publish("part/1", { n: 2 });
    const out = () => runs.map((r) => metric(r, "sink_nop_0_0_records_in_total"));
    await waitFor(() => out().join() === "1,2,2", () => `each run's partition only (got ${out().join()})`, 3000);
    // The two runs of partition 1 share its source: one node counts the two messages for both.
    expect(runs.map((r) => metric(r, "source_s_0_records_in_total"))).toEqual([1, 2, 2]);
  } finally {
    for (const r of runs) await r.stop();
  }
});
