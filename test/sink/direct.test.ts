/**
 * Direct sends (SinkConnector.direct): a connector whose send is synchronous and keeps nothing of
 * the item gets each result within `push` while its queue is empty; behind a backlog, a failing
 * send or a connector not yet open, results queue and the worker sends them, in order.
 */
import { expect, test } from "bun:test";
import { Emission } from "../../lib/core/item.ts";
import { IoError } from "../../lib/errors.ts";
import type { SinkConnector, SinkItem } from "../../lib/sink/connector.ts";
import { SLICE_OUTPUTS as SLICE } from "../../lib/core/turn.ts";
import type { SinkPipeline } from "../../lib/sink/pipeline.ts";
import { openPipeline } from "../helpers/sink.ts";
import { waitFor } from "../helpers/wait.ts";

class Direct implements SinkConnector {
  readonly bytes = true;
  readonly direct = true;
  readonly got: string[] = [];
  failures = 0;
  open(): void {}
  send(item: SinkItem): void {
    if (this.failures > 0) {
      this.failures--;
      throw new IoError("down");
    }
    this.got.push(`${item.payload as string}/${item.rows}`);
  }
  close(): void {}
}

function pipeline(props: Record<string, unknown> = {}) {
  const conn = new Direct();
  return { p: openPipeline("direct", conn, props), conn };
}

const row = (i: number) => new Emission([{ i }], null);
/** Waits for the connector to have received `n` items, at most 2 s. */
const received = (conn: Direct, n: number) => waitFor(() => conn.got.length === n, () => `${n} items at the connector (got ${conn.got.length})`, 2000, 1);
const metric = (p: SinkPipeline, key: string) => (p.metrics.find((m) => m.name === "direct_0" && m.kind === "sink") as unknown as Record<string, number>)[key];

test("an idle direct sink sends within push; before the worker runs, results queue", async () => {
  const { p, conn } = pipeline();
  p.push(row(0));
  // The worker has not started yet (it waits for open): queued.
  expect(conn.got).toEqual([]);
  await received(conn, 1);
  await new Promise((r) => setImmediate(r));
  p.push(row(1));
  p.push(row(2));
  expect(conn.got).toEqual(['{"i":0}/1', '{"i":1}/1', '{"i":2}/1']);
  expect(p.queued).toBe(0);
  expect(metric(p, "recordsIn")).toBe(3);
  expect(metric(p, "recordsOut")).toBe(3);
  expect(metric(p, "lastInvocation")).toBeGreaterThan(0);
  await p.close(100);
});

test("a failing direct send is counted and goes to the worker, which retries it after the interval; later results follow in order", async () => {
  const { p, conn } = pipeline({ resendInterval: 5 });
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  conn.failures = 2;
  p.push(row(0));
  p.push(row(1));
  expect(conn.got).toEqual([]);
  await received(conn, 2);
  p.push(row(2));
  await received(conn, 3);
  expect(conn.got).toEqual(['{"i":0}/1', '{"i":1}/1', '{"i":2}/1']);
  // Every failed attempt is counted, the direct one and the worker's retry alike.
  expect(metric(p, "exceptions")).toBe(2);
  expect(metric(p, "recordsOut")).toBe(3);
  await p.close(100);
});

test("without a retry interval a failing direct send is dropped, counted and lost", async () => {
  const { p, conn } = pipeline();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  conn.failures = 1;
  p.push(row(0));
  p.push(row(1));
  expect(conn.got).toEqual(['{"i":1}/1']);
  expect(metric(p, "exceptions")).toBe(1);
  expect(metric(p, "recordsOut")).toBe(1);
  expect(p.lost).toBe(1);
  await p.close(100);
});

test("results behind a backlog wait their turn", async () => {
  const { p, conn } = pipeline();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  const big = SLICE * 2 + 3;
  p.push(new Emission(Array.from({ length: big }, (_, i) => ({ i })), null));
  p.push(row(big));
  await received(conn, big + 1);
  expect(conn.got).toEqual(Array.from({ length: big + 1 }, (_, i) => `{"i":${i}}/1`));
  await p.close(100);
});
