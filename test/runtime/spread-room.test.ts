/**
 * What waits behind an operator spreading an item across turns is bounded (core/operator.ts
 * WAITING_ITEMS): the rule's drains ask the operator's room as they ask a sink's, so input that
 * arrives during a long spread waits in the source's bounded buffer, and the drain goes on once the
 * spread ends. Every message is still processed once, in order.
 */
import { afterEach, expect, test } from "bun:test";
import { WAITING_ITEMS } from "../../lib/core/operator.ts";
import type { Execution } from "../../lib/runtime/execution.ts";
import type { RunHandle } from "../../lib/runtime/rule.ts";
import { stoppedAfterEach, streams, testRuntime, waitFor } from "../helpers/runtime.ts";

const open = stoppedAfterEach(afterEach);

/** The most items waiting behind a spread in any of `run`'s operators now. */
function waiting(run: RunHandle): number {
  const topo = (run as unknown as { execution: Execution }).execution.topo;
  let most = 0;
  for (const op of topo.planOps()) most = Math.max(most, WAITING_ITEMS - op.room());
  return most;
}

/** Publishes `rows`, `perTurn` a turn, waiting whenever the source refuses (its buffer is full). */
async function paced(publish: (row: object) => Promise<void> | undefined, rows: object[], perTurn: number, each: () => void): Promise<void> {
  for (let i = 0; i < rows.length; i += perTurn) {
    for (let j = i; j < Math.min(rows.length, i + perTurn); j++) await publish(rows[j]!);
    each();
    await new Promise((r) => setImmediate(r));
  }
}

test("a window's emissions spread over many turns while messages keep arriving: at most WAITING_ITEMS wait behind the spread, the rest in the source's buffer; every message is processed once, in order", async () => {
  const t = testRuntime();
  const defs = streams(`CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="room/in")`);
  const out: number[] = [];
  t.env.pubsub.subscribe(
    "room/out",
    (_t, rows) => {
      for (const r of (Array.isArray(rows) ? rows : [rows]) as { n: bigint }[]) out.push(Number(r.n));
      return true;
    },
    () => {},
  );
  // Each hot message fires the window: its 20k rows are grouped, then its groups filtered, across turns.
  const sql = `SELECT k, count(*) AS n FROM m GROUP BY k, SLIDINGWINDOW(ss, 60) OVER (WHEN hot = 1) HAVING sum(hot) > 0`;
  const runs: RunHandle[] = [];
  open.push({ t, rules: runs });
  const run = await t.rule({ id: "room", sql, actions: [{ memory: { topic: "room/out" } }] }, defs).start();
  runs.push(run);
  const publish = (row: object) => t.env.pubsub.publish("room/in", row);
  const cold = Array.from({ length: 20_000 }, (_, i) => ({ k: `k${i % 50}`, hot: 0 }));
  await paced(publish, cold, 1000, () => {});
  const HOT = 400;
  let most = 0;
  let buffered = 0;
  const look = () => {
    most = Math.max(most, waiting(run));
    buffered = Math.max(buffered, Number(run.metrics().source_m_0_buffer_length));
  };
  await paced(publish, Array.from({ length: HOT }, () => ({ k: "hot", hot: 1 })), 40, look);
  await waitFor(
    () => {
      look();
      return out.length === HOT;
    },
    () => `every hot message out (${out.length}, ${waiting(run)} waiting, buffer ${run.metrics().source_m_0_buffer_length})`,
    30_000,
    1,
  );
  // Spread across turns, and held back: the waiting items never passed the bound.
  expect(most).toBeGreaterThan(0);
  expect(most).toBeLessThanOrEqual(WAITING_ITEMS);
  // The rest waited in the source's bounded buffer.
  expect(buffered).toBeGreaterThan(0);
  // What a run without a bound gives: one result per hot message, counting the hot ones so far.
  expect(out).toEqual(Array.from({ length: HOT }, (_, i) => i + 1));
  expect(run.metrics().source_m_0_records_in_total).toBe(cold.length + HOT);
  expect(run.lost()).toBe(0);
}, 60_000);
