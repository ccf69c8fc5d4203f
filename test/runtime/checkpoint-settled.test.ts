/**
 * The checkpoint coordinator stores a snapshot only while the rule's sinks are settled
 * (runtime/checkpoint.ts): one taken while they still hold results is stored once they settle —
 * the snapshot of that moment, not a later one — and the sources acknowledge only then.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Checkpointer } from "../../lib/runtime/checkpoint.ts";
import type { Topology } from "../../lib/runtime/topology.ts";
import { parseSelect } from "../../lib/sql/parse.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { checkpointStore } from "../../lib/store/checkpoint.ts";
import { decodeState } from "../../lib/store/state-codec.ts";
import { waitFor } from "../helpers/runtime.ts";

test("a snapshot taken while the sinks are busy is stored when they settle, and none before", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-cp-settled-"));
  const store = checkpointStore(dir);
  let n = 1;
  let settled = false;
  const saved: [number, number][] = [];
  const topo = { snapshot: () => ({ op: n }), sinkState: () => ({}) } as unknown as Topology;
  const cp = new Checkpointer("r", store, parseSelect("SELECT * FROM s", createFunctionRegistry()), "inc", () => {}, () => true, () => settled);
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
    settled = true;
    // The snapshot of the tick, with the read position read then; settled, the next ticks store at once.
    await waitFor(() => saved.length >= 2, "the waiting snapshot and a newer one stored", 2000, 1);
    expect(saved.slice(0, 2)).toEqual([
      [1, 10],
      [2, 20],
    ]);
    // A snapshot waiting at stop is dropped.
    settled = false;
    n = 3;
    await Bun.sleep(20);
    cp.stop();
    settled = true;
    await Bun.sleep(20);
    expect(stored()!.ops.op).toBe(2);
  } finally {
    cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
