/**
 * The sqlite trace store (`openTelemetry.enableLocalStorage: true`): the memory store's queries
 * and bounds on `<data>/trace.db`, written off the message path by a timer, kept across a reopen;
 * and the hub picks memory or sqlite by the setting, as eKuiper does.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TraceHub } from "../../../lib/runtime/trace/hub.ts";
import { createNetGuard } from "../../../lib/net/guard.ts";
import { PENDING_MAX, SqliteTraceStore } from "../../../lib/runtime/trace/sqlite-store.ts";
import { Span } from "../../../lib/runtime/trace/span.ts";
import { LocalTraceStore, MAX_SPANS_PER_TRACE } from "../../../lib/runtime/trace/store.ts";

const dir = () => mkdtempSync(join(tmpdir(), "floe-trace-db-"));

function span(name: string, traceId: string, parent: Span | null, ruleId = "r", remote = ""): Span {
  const s = new Span(name, traceId, parent, remote, ruleId, null);
  s.end = s.start + 1;
  return s;
}

test("the oldest trace past the capacity is evicted with its spans; one trace holds at most MAX_SPANS_PER_TRACE spans", async () => {
  const st = new SqliteTraceStore(dir(), 2);
  try {
    const a = span("a", "t1", null, "r1");
    st.add(a);
    st.add(span("b", "t2", null, "r2"));
    st.add(span("c", "t1", a, "r1"));
    const d = span("d", "t3", null, "r1");
    st.add(d);
    expect(await st.tree("t1")).toBeUndefined();
    expect(await st.traceIds("r1", 0)).toEqual(["t3"]);
    expect(await st.traceIds("r2", 5)).toEqual(["t2"]);
    for (let i = 0; i < MAX_SPANS_PER_TRACE + 10; i++) st.add(span("x", "t3", d));
    expect((await st.tree("t3"))!.ChildSpan).toHaveLength(MAX_SPANS_PER_TRACE - 1);
    expect(st.dropped).toBe(11);
    for (const t of ["t4", "t5", "t6"]) st.add(span("e", t, null, "r1"));
    expect(await st.traceIds("r1", 0)).toEqual(["t6", "t5"]);
    expect(await st.traceIds("r1", 1)).toEqual(["t6"]);
  } finally {
    st.close();
  }
});

test("the tree read back from disk is the memory store's, attributes and links included", async () => {
  const st = new SqliteTraceStore(dir(), 10);
  const mem = new LocalTraceStore(10);
  try {
    const root = span("source_s", "t", null, "r", "upstream");
    const mid = new Span("op_3_window", "t", root, "", "r", [{ traceId: "c".repeat(32), spanId: "d".repeat(16) }]);
    mid.end = mid.start + 2;
    const leaf = span("sink_nop_0", "t", mid);
    root.attributes.data = '{"a":1}';
    root.attributes.error = "bad";
    for (const s of [leaf, mid, root]) {
      st.add(s);
      mem.add(s);
    }
    const tree = (await st.tree("t"))!;
    expect(tree).toEqual(mem.tree("t")!);
    expect(tree.ChildSpan[0]!.links).toEqual([{ TraceID: "c".repeat(32) }]);
    expect(tree.parentSpanID).toBe("upstream");
  } finally {
    st.close();
  }
});

test("spans are written by a timer a few ms a turn, never by add; a full queue drops and counts; a query waits for what was queued before it", async () => {
  const d = dir();
  const st = new SqliteTraceStore(d, 100);
  const db = new Database(join(d, "trace.db"), { readonly: true });
  const onDisk = () => (db.query("SELECT count(*) AS n FROM spans").get() as { n: number }).n;
  for (let i = 0; i < PENDING_MAX + 5; i++) st.add(span("s", `t${i % 50}`, null));
  expect(st.dropped).toBe(5);
  expect(onDisk()).toBe(0);
  // The writer yields between turns: a timer of this test runs while spans are still queued.
  let seenPartial = false;
  const probe = setInterval(() => (seenPartial ||= onDisk() > 0 && onDisk() < PENDING_MAX), 1);
  const ids = await st.traceIds("r", 0);
  clearInterval(probe);
  expect(onDisk()).toBe(PENDING_MAX);
  expect(seenPartial).toBe(true);
  expect(ids).toHaveLength(50);
  db.close();
  st.close();
  const again = new SqliteTraceStore(d, 100);
  try {
    expect(await again.traceIds("r", 0)).toEqual(ids);
    expect((await again.tree(ids[0]!))!.name).toBe("s");
  } finally {
    again.close();
  }
});

test("the hub keeps traces in memory unless enableLocalStorage, then in <data>/trace.db", async () => {
  const settings = { serviceName: "t", enableRemoteCollector: false, remoteEndpoint: "", localTraceCapacity: 5, localTraceMaxBytes: 64 * 1024 * 1024 };
  const d1 = dir();
  const mem = new TraceHub({ ...settings, enableLocalStorage: false }, createNetGuard(), () => {}, d1);
  expect(mem.store).toBeInstanceOf(LocalTraceStore);
  mem.record(span("a", "t1", null));
  expect(mem.store.traceIds("r", 0)).toEqual(["t1"]);
  await mem.close();
  expect(existsSync(join(d1, "trace.db"))).toBe(false);

  const d2 = dir();
  const disk = new TraceHub({ ...settings, enableLocalStorage: true }, createNetGuard(), () => {}, d2);
  expect(disk.store).toBeInstanceOf(SqliteTraceStore);
  disk.record(span("a", "t1", null));
  expect(await disk.store.traceIds("r", 0)).toEqual(["t1"]);
  await disk.close();
  expect(existsSync(join(d2, "trace.db"))).toBe(true);
});
