/**
 * The trace store's byte budget (core/byte-budget.ts): tracing `always` with big rows keeps the
 * store under `localTraceMaxBytes`, evicting the oldest traces, and a stored span holds its cut
 * data only — not the whole row it was cut from.
 */
import { afterEach, expect, test } from "bun:test";
import { TraceHub } from "../../../lib/runtime/trace/hub.ts";
import type { LocalTraceStore } from "../../../lib/runtime/trace/store.ts";
import { SqliteTraceStore } from "../../../lib/runtime/trace/sqlite-store.ts";
import { Span } from "../../../lib/runtime/trace/span.ts";
import { heapStats } from "bun:jsc";
import type { RunHandle } from "../../../lib/runtime/rule.ts";
import { metric, streams, testRuntime, waitFor } from "../../helpers/runtime.ts";
import { createNetGuard } from "../../../lib/net/guard.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const defs = streams(`CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="in")`);

/** A hub keeping its traces in memory. */
function hub(capacity: number, maxBytes: number): TraceHub {
  const s = { serviceName: "t", enableRemoteCollector: false, remoteEndpoint: "", localTraceCapacity: capacity, localTraceMaxBytes: maxBytes, enableLocalStorage: false };
  return new TraceHub(s, createNetGuard(), () => {}, "");
}

const open: RunHandle[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.stop();
});

test("tracing `always` with 300 KB rows: the store stays under its byte budget, the newest traces kept", async () => {
  const maxBytes = 256 * 1024;
  const h = hub(2048, maxBytes);
  const t = testRuntime({ traces: h });
  const run = await t.rule({ id: "big", sql: "SELECT * FROM m", actions: [{ nop: {} }] }, defs).start();
  open.push(run);
  run.trace("always");
  const pad = "x".repeat(300_000);
  for (let i = 0; i < 200; i++) await t.env.pubsub.publish("in", { i, pad });
  await waitFor(() => metric(run, "sink_nop_0_0_records_in_total") === 200, "200 rows");
  const store = h.store as LocalTraceStore;
  expect(store.budget.bytes).toBeLessThanOrEqual(maxBytes);
  expect(store.budget.bytes).toBeGreaterThan(maxBytes / 2);
  // Far fewer than the 2,048 the count alone would keep; the most recent ones.
  expect(store.size).toBeLessThan(200);
  expect(store.size).toBeGreaterThan(5);
  expect(store.evictedForBytes).toBe(200 - store.size);
  const newest = store.tree(store.traceIds("big", 1)[0]!)!;
  expect(newest.attribute!.data).toStartWith('{"i":199,');
});

test("a stored span keeps its cut data only, not the row it was cut from", async () => {
  // 200 traces of 1 MB rows: each span holding its whole encoded row would be 400 MB and more.
  const h = hub(2048, 64 * 1024 * 1024);
  const t = testRuntime({ traces: h });
  const run = await t.rule({ id: "big", sql: "SELECT * FROM m", actions: [{ nop: {} }] }, defs).start();
  open.push(run);
  run.trace("always");
  Bun.gc(true);
  const before = heapStats().heapSize;
  for (let i = 0; i < 200; i++) await t.env.pubsub.publish("in", { i, pad: "y".repeat(1_000_000) + i });
  await waitFor(() => metric(run, "sink_nop_0_0_records_in_total") === 200, "200 rows");
  Bun.gc(true);
  // The live heap after a full collection (RSS would also count what the allocator has not returned yet).
  const grown = heapStats().heapSize - before;
  expect((h.store as LocalTraceStore).size).toBe(200);
  expect(grown).toBeLessThan(40 * 1024 * 1024);
});

test("the sqlite store's write queue is bounded in bytes too", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-trace-budget-"));
  try {
    const store = new SqliteTraceStore(dir, 100, 64 * 1024);
    for (let i = 0; i < 100; i++) {
      const s = new Span("source_m", i.toString(16).padStart(32, "0"), null, "", "r", null);
      s.attributes.data = "z".repeat(4096);
      store.add(s);
    }
    expect(store.budget.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(store.dropped).toBeGreaterThan(80);
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
