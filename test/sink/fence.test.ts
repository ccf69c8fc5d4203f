/**
 * The fence of a group partition's run (server/partitioned-run.ts): while it is closed — the
 * member's lease lapsed or another member claimed the partition — the sink sends nothing and counts
 * each result as an exception; the checkpoint coordinator stores nothing (so nothing is acknowledged).
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Emission } from "../../lib/core/item.ts";
import type { SinkConnector, SinkItem } from "../../lib/sink/connector.ts";
import { Checkpointer } from "../../lib/runtime/checkpoint.ts";
import type { Topology } from "../../lib/runtime/topology.ts";
import { parseSelect } from "../../lib/sql/parse.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { checkpointStore } from "../../lib/store/checkpoint.ts";
import { waitFor } from "../helpers/runtime.ts";
import { openPipeline } from "../helpers/sink.ts";

class Capture implements SinkConnector {
  readonly bytes = true;
  readonly direct = true;
  readonly got: string[] = [];
  open(): void {}
  send(item: SinkItem): void {
    this.got.push(item.payload as string);
  }
  close(): void {}
}

test("a fenced sink sends nothing and counts each result; reopened, it sends again", async () => {
  let open = true;
  const conn = new Capture();
  const p = openPipeline("capture", conn, {}, () => open);
  p.push(new Emission([{ i: 1 }], null));
  open = false;
  p.push(new Emission([{ i: 2 }], null));
  open = true;
  p.push(new Emission([{ i: 3 }], null));
  await waitFor(() => conn.got.length >= 2, "the sends", 2000, 1);
  expect(conn.got.map((x) => JSON.parse(x).i)).toEqual([1, 3]);
  const sink = p.metrics.find((m) => m.kind === "sink")!;
  expect([sink.exceptions, sink.lastException]).toEqual([1, "not sent: this member may no longer own the partition (its lease lapsed or a newer owner claimed it); the owner recomputes it from the group's checkpoint"]);
});

test("a fenced checkpoint coordinator stores no checkpoint", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-fence-cp-"));
  let open = false;
  const topo = { snapshot: () => ({ op: 1 }), sinkState: () => ({}) } as unknown as Topology;
  const cp = new Checkpointer("r.p0", checkpointStore(dir), parseSelect("SELECT * FROM s", createFunctionRegistry()), "inc", () => {}, () => open);
  expect(cp.take(topo, () => ({}))).toBe(false);
  expect(checkpointStore(dir).latest("r.p0")).toBeUndefined();
  open = true;
  expect(cp.take(topo, () => ({}))).toBe(true);
  expect(checkpointStore(dir).latest("r.p0")).toBeDefined();
});
