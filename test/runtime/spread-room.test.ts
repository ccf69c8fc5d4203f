/**
 * What waits behind an operator spreading an item across turns is bounded (core/operator.ts
 * WAITING_ITEMS): the rule's drains ask the operator's room as they ask a sink's, so input that
 * arrives during a long spread waits in the source's bounded buffer, and the drain goes on once the
 * spread ends. Every message is still processed once, in order.
 */
import { afterEach, expect, test } from "bun:test";
import { DataServer } from "../../lib/connectors/http/server.ts";
import { WAITING_ITEMS } from "../../lib/core/operator.ts";
import type { Execution } from "../../lib/runtime/execution.ts";
import type { RunHandle } from "../../lib/runtime/rule.ts";
import type { Obj } from "../../lib/value/values.ts";
import { collect } from "../helpers/data-server.ts";
import { stoppedAfterEach, streams, testRuntime, waitFor } from "../helpers/runtime.ts";

const open = stoppedAfterEach(afterEach);

const topoOf = (run: RunHandle) => (run as unknown as { execution: Execution }).execution.topo;

/** The most items waiting behind a spread in any of `run`'s operators now. */
function waiting(run: RunHandle): number {
  const topo = topoOf(run);
  let most = 0;
  for (const op of topo.planOps()) most = Math.max(most, WAITING_ITEMS - op.room());
  return most;
}

/** Publishes `rows`, `perTurn` a turn, waiting whenever the source refuses (its buffer is full). */
async function paced(publish: (row: Obj) => Promise<void> | undefined, rows: Obj[], perTurn: number, each: () => void): Promise<void> {
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
  const publish = (row: Obj) => t.env.pubsub.publish("room/in", row);
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

test("a drain group member whose operator has no room behind a spread takes its own messages again and waits on them, the others go on; once it has room it takes each message once, in order", async () => {
  const t = testRuntime({ dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }) });
  const defs = streams(`CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/room", FORMAT="json", SHARED="true")`);
  const runs: RunHandle[] = [];
  const outs: string[][] = [];
  open.push({ t, rules: runs });
  for (let i = 0; i < 3; i++) {
    outs.push(collect(t, `g/${i}`));
    runs.push(await t.rule({ id: `g${i}`, sql: "SELECT k FROM s WHERE k % 3 != 1", actions: [{ memory: { sendSingle: true, topic: `g/${i}` } }] }, defs).start());
  }
  const decoded = (r: RunHandle) => Number(r.metrics().op_s_decoder_0_records_in_total);
  let k = 0;
  const send = async (n: number) => {
    for (let i = 0; i < n; i++, k++) {
      const r = await fetch(`http://127.0.0.1:${t.env.dataServer.port}/room`, { method: "POST", body: JSON.stringify({ k }) });
      expect(r.status).toBe(200);
    }
  };
  await send(30);
  await waitFor(() => runs.every((r) => decoded(r) === k), "every member decoded the first messages");
  // A parked member's first operator has no room, as when WAITING_ITEMS wait behind its spread.
  const op = topoOf(runs[1]!).planOps()[0]!;
  const told: (() => void)[] = [];
  op.room = () => 0;
  op.onRoom = (fn) => void told.push(fn);
  // The group hands it no more than the room it last told (what would wait behind the spread), then it falls back.
  const others = async () => waitFor(() => decoded(runs[0]!) === k && decoded(runs[2]!) === k, "the others decoded every message");
  await send(WAITING_ITEMS + 50);
  await others();
  const took = decoded(runs[1]!);
  expect(took).toBeLessThan(k);
  expect(took).toBeLessThanOrEqual(30 + WAITING_ITEMS);
  expect(told.length).toBeGreaterThan(0);
  // Meanwhile its messages wait in its own queue; the others go on.
  await send(30);
  await others();
  expect(decoded(runs[1]!)).toBe(took);
  // The spread ended: its drain is told, and it takes what waited in its own queue.
  delete (op as { room?: unknown }).room;
  delete (op as { onRoom?: unknown }).onRoom;
  for (const fn of told) fn();
  await send(30);
  await waitFor(() => runs.every((r) => decoded(r) === k), "every member decoded every message");
  const want = Array.from({ length: k }, (_, i) => i).filter((i) => i % 3 !== 1);
  for (let i = 0; i < runs.length; i++) expect({ i, k: outs[i]!.map((o) => (JSON.parse(o) as { k: number }).k) }).toEqual({ i, k: want });
});
