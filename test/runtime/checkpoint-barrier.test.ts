/**
 * The checkpoint barrier (runtime/checkpoint.ts): a snapshot records each sink's count of the
 * results it was given and is stored once every sink's watermark reaches it — the snapshot of that
 * moment, not a later one — and the sources acknowledge only then. Later results still in flight
 * do not hold it back: a sink that always has an unconfirmed publish still gets checkpoints.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Emission } from "../../lib/core/item.ts";
import { Checkpointer, type SinkBarrier } from "../../lib/runtime/checkpoint.ts";
import type { Topology } from "../../lib/runtime/topology.ts";
import type { SinkConnector } from "../../lib/sink/connector.ts";
import { parseSelect } from "../../lib/sql/parse.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { checkpointStore } from "../../lib/store/checkpoint.ts";
import { decodeState } from "../../lib/store/state-codec.ts";
import { openPipeline } from "../helpers/sink.ts";
import { waitFor } from "../helpers/runtime.ts";

const select = () => parseSelect("SELECT * FROM s", createFunctionRegistry());

test("a snapshot waits until the sink's watermark reaches its count, and is stored then; none before", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-cp-barrier-"));
  const store = checkpointStore(dir);
  let n = 1;
  // One sink, given n results so far, `safe` of them delivered.
  let safe = 0;
  const sinks: SinkBarrier = { given: () => [n], passed: (m) => safe >= m[0]! };
  const saved: [number, number][] = [];
  const topo = { snapshot: () => ({ op: n }), sinkState: () => ({}) } as unknown as Topology;
  const cp = new Checkpointer("r", store, select(), "inc", () => {}, () => true, sinks);
  const stored = () => {
    const t = store.latest("r");
    return t === undefined ? undefined : (decodeState(t) as { ops: { op: number }; sources: { s: { $$offset: number } } });
  };
  try {
    cp.start(5, topo, () => ({ s: n * 10 }), () => {
      const s = stored()!;
      saved.push([s.ops.op, s.sources.s.$$offset]);
    });
    await Bun.sleep(40);
    // Several ticks passed: the first one's snapshot waits, nothing is stored or acknowledged.
    expect([stored(), saved]).toEqual([undefined, []]);
    n = 2;
    await Bun.sleep(20);
    // The first snapshot's barrier (1) passes while the second result is still undelivered.
    safe = 1;
    await waitFor(() => saved.length >= 1, "the waiting snapshot stored", 2000, 1);
    expect(saved[0]).toEqual([1, 10]);
    await Bun.sleep(30);
    // The next snapshot counts 2 results: it waits for the second.
    expect(saved.length).toBe(1);
    safe = 2;
    await waitFor(() => saved.length >= 2, "a newer one stored", 2000, 1);
    expect(saved[1]).toEqual([2, 20]);
    // A snapshot waiting at stop is dropped.
    n = 3;
    await Bun.sleep(20);
    cp.stop();
    safe = 3;
    await Bun.sleep(20);
    expect(stored()!.ops.op).toBe(2);
  } finally {
    cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A destination that confirms each publish `lagMs` after it, in order. */
class Lagging implements SinkConnector {
  readonly bytes = true;
  sent = 0;
  acked = 0;
  constructor(private readonly lagMs: number) {}
  open(): void {}
  send(): void {
    const n = ++this.sent;
    setTimeout(() => (this.acked = Math.max(this.acked, n)), this.lagMs);
  }
  confirmed(): number {
    return this.acked;
  }
  close(): void {}
}

test("a sink that always has a publish awaiting confirmation: checkpoints are stored, each counting only confirmed results", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-cp-inflight-"));
  const store = checkpointStore(dir);
  const conn = new Lagging(4);
  const p = openPipeline("lag", conn);
  // The topology's state is the number of results it gave the sink.
  let made = 0;
  const topo = { snapshot: () => ({ op: made }), sinkState: () => ({}) } as unknown as Topology;
  const sinks: SinkBarrier = { given: () => [p.given], passed: (m) => p.safe(true) >= m[0]! };
  const cp = new Checkpointer("r", store, select(), "inc", () => {}, () => true, sinks);
  const feed = setInterval(() => {
    for (let i = 0; i < 3; i++) p.push(new Emission([{ i: ++made }], null));
  }, 1);
  const stored: { op: number; confirmed: number; inFlight: number }[] = [];
  try {
    cp.start(10, topo, () => ({}), () => {
      const s = decodeState(store.latest("r")!) as { ops: { op: number } };
      stored.push({ op: s.ops.op, confirmed: conn.acked, inFlight: conn.sent - conn.acked });
    });
    await waitFor(() => stored.length >= 5, () => `5 checkpoints (got ${stored.length}; ${conn.sent} sent, ${conn.acked} confirmed)`, 5000, 5);
    for (const s of stored) {
      // Every result the checkpoint counts was confirmed when it was stored …
      expect(s.op).toBeLessThanOrEqual(s.confirmed);
      expect(s.op).toBeGreaterThan(0);
    }
    // … while later ones were still awaiting their confirmation: the sink was never idle.
    expect(stored.some((s) => s.inFlight > 0)).toBe(true);
    expect(p.settled).toBe(false);
  } finally {
    clearInterval(feed);
    cp.stop();
    await p.close(0);
    rmSync(dir, { recursive: true, force: true });
  }
});
