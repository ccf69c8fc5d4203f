/**
 * A keyed sink's item keys in a checkpoint (sink/emission-keys.ts, SinkPipeline.snapshot). Taken
 * while a big result waits in the sink's backlog, the snapshot leaves the backlog to its slices —
 * the event loop runs between them — and counts the keys of the results it covers once they are
 * made into items, not those of later results: a run restored from it keys what follows as the
 * first run did, as a snapshot that encoded the backlog at once would have.
 */
import { expect, test } from "bun:test";
import { Emission } from "../../lib/core/item.ts";
import { SLICE_OUTPUTS as SLICE } from "../../lib/core/turn.ts";
import type { SinkConnector, SinkItem } from "../../lib/sink/connector.ts";
import type { SinkPipeline } from "../../lib/sink/pipeline.ts";
import { openPipeline } from "../helpers/sink.ts";
import { waitFor } from "../helpers/wait.ts";

/** A connector that reads item keys (as the JetStream sink does), keeping them in order. */
class Keyed implements SinkConnector {
  readonly bytes = true;
  readonly keyed = true;
  readonly keys: string[] = [];
  open(): void {}
  send(item: SinkItem): void {
    this.keys.push(item.key);
  }
  close(): void {}
}

/** Rows the pipeline's transform has made into outputs so far. */
const transformed = (p: SinkPipeline) => p.metrics.find((m) => m.name.endsWith("_transform"))!.recordsOut;

/** The rows of one result. */
const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ i: from + i }));

test("a snapshot taken behind a big backlog leaves it to its slices, and counts the keys of the results it covers", async () => {
  const conn = new Keyed();
  const p = openPipeline("nats", conn);
  const N = 40 * SLICE;
  try {
    p.push(new Emission(rows(N), null));
    let atTimer = -1;
    setTimeout(() => (atTimer = transformed(p)), 0);
    const snap = p.snapshot()!;
    const covered = p.given;
    await waitFor(() => atTimer >= 0, "the timer");
    // The timer fired between two slices: the backlog was not made into items in one go.
    expect(atTimer).toBeLessThan(N);
    // A later result, pushed while the big one is still being sliced.
    p.push(new Emission([{ i: N }], null));
    await waitFor(() => p.safe(true) >= covered, "the results the snapshot covers delivered");
    await waitFor(() => conn.keys.length === N + 1, "every item sent");
    // The keys of the results it covers, not the later one's (whose key was made by then).
    expect(JSON.parse(JSON.stringify(snap))).toEqual({ epoch: expect.any(String), made: N });
    expect(conn.keys[N - 1]).toBe(`nats_0:${snap.epoch}-${N}`);
    // A run restored from it keys the later result as this run did.
    const again = new Keyed();
    const q = openPipeline("nats", again);
    try {
      q.restore(JSON.parse(JSON.stringify(snap)));
      q.push(new Emission([{ i: N }], null));
      await waitFor(() => again.keys.length === 1, "the replayed item sent");
      expect(again.keys).toEqual([conn.keys[N]!]);
    } finally {
      await q.close(0);
    }
  } finally {
    await p.close(0);
  }
});

test("outputs waiting for their batch at a snapshot: their batch's key is the snapshot's", async () => {
  const conn = new Keyed();
  const p = openPipeline("nats", conn, { sendSingle: false, batchSize: 3 });
  try {
    p.push(new Emission([{ i: 1 }], null));
    p.push(new Emission([{ i: 2 }], null));
    const snap = p.snapshot()!;
    // The batch fills with a result the snapshot does not cover, then the next batch follows.
    for (let i = 3; i <= 6; i++) p.push(new Emission([{ i }], null));
    p.push(new Emission([{ i: 7 }], null));
    p.push(new Emission([{ i: 8 }], null));
    p.push(new Emission([{ i: 9 }], null));
    await waitFor(() => conn.keys.length === 3, "three batches sent");
    expect(JSON.parse(JSON.stringify(snap))).toEqual({ epoch: expect.any(String), made: 1 });
  } finally {
    await p.close(0);
  }
});
