/**
 * Execution.holdForSinks (a group partition's upload, lib/server/partitioned-run.ts): while held a
 * run processes no new input — what arrives waits in its queue — and `resumeDrains` lets it go;
 * the hold answers whether the sinks are settled (SinkPipeline.settled).
 */
import { expect, test } from "bun:test";
import { metric, streams, testRuntime, waitFor } from "../helpers/runtime.ts";

test("held, a run takes no new input and its settled sinks say so; resumed, it takes what waited", async () => {
  const t = testRuntime();
  const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="hold/in")`);
  const run = await t.rule({ id: "hold", sql: "SELECT n FROM s", actions: [{ memory: { topic: "hold/out" } }] }, defs).start();
  try {
    await t.env.pubsub.publish("hold/in", { n: 1 });
    await waitFor(() => metric(run, "sink_memory_0_0_records_out_total") === 1, "the first sent");
    expect(run.sinksSettled()).toBe(true);
    expect(await run.holdForSinks(1000)).toBe(true);
    for (let i = 2; i <= 4; i++) await t.env.pubsub.publish("hold/in", { n: i });
    await Bun.sleep(100);
    expect([metric(run, "source_s_0_records_in_total"), metric(run, "sink_memory_0_0_records_out_total")]).toEqual([1, 1]);
    // A second hold while one is on answers false at once.
    expect(await run.holdForSinks(1000)).toBe(false);
    run.resumeDrains();
    await waitFor(() => metric(run, "sink_memory_0_0_records_out_total") === 4, "the three that waited");
    expect(metric(run, "source_s_0_records_in_total")).toBe(4);
  } finally {
    await run.stop();
  }
});

test("a run reading a backlog flat out stops taking input once held, and takes the rest once resumed", async () => {
  const t = testRuntime();
  const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="flood/in")`);
  const N = 300_000;
  const run = await t.rule({ id: "flood", sql: "SELECT n FROM s", actions: [{ memory: { topic: "flood/out" } }], options: { bufferLength: N } }, defs).start();
  try {
    // The whole backlog waits in the subscription, and the run drains it in slices
    // that each yield to the event loop (the drain deadline) and go on by themselves.
    for (let n = 0; n < N; n++) void t.env.pubsub.publish("flood/in", { n });
    const out = () => metric(run, "sink_memory_0_0_records_out_total") as number;
    await waitFor(() => out() > 0, "the drain under way", 10_000, 1);
    expect(await run.holdForSinks(1000)).toBe(true);
    const sent = out();
    expect(sent).toBeLessThan(N);
    await Bun.sleep(100);
    // Held: no more of the backlog was processed.
    expect(out()).toBe(sent);
    run.resumeDrains();
    await waitFor(() => metric(run, "sink_memory_0_0_records_out_total") === N, "the rest of the backlog");
  } finally {
    await run.stop();
  }
}, 30_000);
