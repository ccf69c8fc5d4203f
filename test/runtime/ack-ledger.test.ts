/**
 * The acknowledgement ledger (runtime/acks.ts, docs/sinks.md): with every sink
 * cached, a run records what its subscriptions admitted and what was durable; the next run counts
 * the difference as `source_<stream>_0_records_lost_total`, logs it, and adds it to its own
 * lost count (the ledger, not the runtime, carries a loss from one run to the next). A stateless rule loses nothing; a windowed qos 1 rule loses what came after its last
 * checkpoint; qos 0 windows and uncached sinks keep no ledger (no key).
 */
import { expect, test } from "bun:test";
import { AckLedger, cacheDb } from "../../lib/store/sink-cache.ts";
import { metric, streams, testRuntime, waitFor, type TestRuntime } from "../helpers/runtime.ts";

const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="ledger/in")`);
const WINDOW = "SELECT count(*) AS c FROM s GROUP BY TUMBLINGWINDOW(ss, 3600)";

function rule(t: TestRuntime, id: string, sql: string, options: Record<string, unknown> = {}, cache = true) {
  return t.rule({ id, sql, options, actions: [{ memory: { topic: `ledger/out/${id}`, enableCache: cache } }] }, defs);
}

async function publish(t: TestRuntime, k: number): Promise<void> {
  for (let i = 0; i < k; i++) await t.env.pubsub.publish("ledger/in", { n: i });
}

test("a stateless rule with cached sinks loses nothing across a stop: the key reads 0", async () => {
  const t = testRuntime();
  const r = rule(t, "plain", "SELECT n FROM s");
  let run = await r.start();
  expect(metric(run, "source_s_0_records_lost_total")).toBe(0);
  await publish(t, 5);
  await waitFor(() => metric(run, "sink_memory_0_0_records_out_total") === 5, "five sent");
  await run.stop();
  run = await r.start();
  expect(metric(run, "source_s_0_records_lost_total")).toBe(0);
  expect(run.lost()).toBe(0);
  await run.stop();
});

test("a windowed qos 1 rule stopped without saving its state counts what came after its last checkpoint", async () => {
  const t = testRuntime();
  const r = rule(t, "win", WINDOW, { qos: 1, checkpointInterval: 3_600_000 });
  let run = await r.start();
  await publish(t, 5);
  await waitFor(() => metric(run, "source_s_0_records_in_total") === 5, "five in");
  await run.stop();
  const lostByFirst = run.lost();
  run = await r.start();
  expect(metric(run, "source_s_0_records_lost_total")).toBe(5);
  // The loss is the next run's: the ledger (store/) carries it over, counted once.
  expect(lostByFirst + run.lost()).toBe(5);
  expect(t.logs).toContain("rule win: 5 message(s) of stream s acknowledged before the last stop were lost (neither in the sink cache nor in a checkpoint)");
  // Counted once: the run after it starts from a fresh ledger.
  await run.stop();
  run = await r.start();
  expect(metric(run, "source_s_0_records_lost_total")).toBe(0);
  expect(run.lost()).toBe(0);
  await run.stop();
});

test("a checkpoint covers what was taken before it; enableSaveStateBeforeStop covers the rest", async () => {
  const t = testRuntime();
  const r = rule(t, "cp", WINDOW, { qos: 1, checkpointInterval: 20 });
  let run = await r.start();
  await publish(t, 4);
  const ledger = new AckLedger(cacheDb(t.env.dataDir), "cp");
  await waitFor(() => ledger.rows()[0]?.covered === 4, "a checkpoint after the four");
  await run.stop();
  run = await r.start();
  expect(metric(run, "source_s_0_records_lost_total")).toBe(0);
  await run.stop();

  const saved = rule(t, "saved", WINDOW, { qos: 1, checkpointInterval: 3_600_000, enableSaveStateBeforeStop: true });
  run = await saved.start();
  await publish(t, 3);
  await waitFor(() => metric(run, "source_s_0_records_in_total") === 3, "three in");
  await run.stop();
  run = await saved.start();
  expect(metric(run, "source_s_0_records_lost_total")).toBe(0);
  await run.stop();
});

test("no ledger (and no key) for qos 0 windows or a sink without the cache", async () => {
  const t = testRuntime();
  for (const r of [rule(t, "q0", WINDOW), rule(t, "nocache", "SELECT n FROM s", {}, false)]) {
    const run = await r.start();
    expect(run.metrics()["source_s_0_records_lost_total"]).toBeUndefined();
    await run.stop();
  }
});

test("what a run lost is still counted when the rule was changed to keep no ledger", async () => {
  const t = testRuntime();
  const before = await rule(t, "upd", WINDOW, { qos: 1, checkpointInterval: 3_600_000 }).start();
  await publish(t, 3);
  await waitFor(() => metric(before, "source_s_0_records_in_total") === 3, "three in");
  await before.stop();
  const after = rule(t, "upd", WINDOW);
  let run = await after.start();
  expect(metric(run, "source_s_0_records_lost_total")).toBe(3);
  await run.stop();
  run = await after.start();
  expect(run.metrics()["source_s_0_records_lost_total"]).toBeUndefined();
  await run.stop();
});
