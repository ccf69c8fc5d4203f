/** Lookup sources (rules-and-sinks.md §10.3, §11.3, §11.10): memory, simulator, the `lookup` cache. */
import { describe, expect, test } from "bun:test";
import type { Obj, Value } from "../../lib/value/values.ts";
import { CachedLookup, lookupCacheConf } from "../../lib/lookup/cache.ts";
import { createLookupEnv, createLookupSource, openLookupTable } from "../../lib/connectors/lookups.ts";
import { createNetGuard } from "../../lib/net/guard.ts";
import { streamDef } from "../../lib/plan/streams.ts";
import { parseStatement } from "../../lib/sql/parse.ts";
import type { CreateStatement } from "../../lib/sql/ast.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import type { LookupSource } from "../../lib/lookup/table.ts";
import { MemoryLookup, memoryTableStats } from "../../lib/connectors/memory/lookup.ts";
import { SimulatorLookup } from "../../lib/connectors/simulator/lookup.ts";
import { MemoryPubSub } from "../../lib/connectors/memory/pubsub.ts";
import { createRuntimeEnv } from "../../lib/runtime/env.ts";

describe("memory lookup", () => {
  test("fed by publishes on its topic (wildcards too); rowkind delete removes; shared by topic and key", async () => {
    const ps = new MemoryPubSub();
    const a = new MemoryLookup({ datasource: "dev/+", key: "id" }, ps);
    const b = new MemoryLookup({ datasource: "dev/+", key: "id" }, ps);
    await ps.publish("dev/1", { id: 1n, v: "before open" });
    a.open();
    b.open();
    expect(a.lookup(["id"], [1n])).toEqual([]); // empty at start
    await ps.publish("dev/1", [{ id: 1n, v: "a" }, { id: 2n, v: "b" }]);
    await ps.publish("dev/2", { id: 1n, v: "a2" }); // latest row per key wins
    expect(a.lookup(["id"], [1n])).toEqual([{ id: 1n, v: "a2" }]);
    expect(b.lookup(["id"], [2])).toEqual([{ id: 2n, v: "b" }]); // float 2 finds int 2
    expect(b.lookup(["v"], ["b"])).toEqual([{ id: 2n, v: "b" }]); // a non-key field scans
    await ps.publish("dev/1", { id: 2n, op: "delete" }, { rowkindField: "op", keyField: "id" });
    expect(a.lookup(["id"], [2n])).toEqual([]);
    a.close();
    expect(b.lookup(["id"], [1n])).toHaveLength(1); // b still holds the table
    b.close();
    const c = new MemoryLookup({ datasource: "dev/+", key: "id" }, ps);
    c.open();
    expect(c.lookup(["id"], [1n])).toEqual([]); // the last user closed it: a new one starts empty
    c.close();
  });

  test("a table holds at most maxBytes of rows: new keys past it are refused and counted, updates that fit and deletes go on", async () => {
    const ps = new MemoryPubSub();
    const t = new MemoryLookup({ datasource: "big", key: "id", maxBytes: 64 * 1024 }, ps);
    t.open();
    const pad = "x".repeat(1000);
    for (let i = 0; i < 200; i++) await ps.publish("big", { id: i, pad });
    const [stats] = memoryTableStats(ps);
    expect(stats!.topic).toBe("big");
    const b = stats!.budget;
    expect(b.bytes).toBeLessThanOrEqual(64 * 1024);
    // About 1.1 KB a row as estimated.
    expect(b.rows).toBeGreaterThan(40);
    expect(b.rows).toBeLessThan(64);
    expect(b.droppedRows).toBe(200 - b.rows);
    expect(t.lookup(["id"], [0])).toHaveLength(1);
    expect(t.lookup(["id"], [199])).toEqual([]);
    // An update of a held key that fits replaces it; a delete makes room for a new key.
    await ps.publish("big", { id: 0, pad: "y" });
    expect(t.lookup(["id"], [0])).toEqual([{ id: 0, pad: "y" }]);
    await ps.publish("big", { id: 1, op: "delete" }, { rowkindField: "op", keyField: "id" });
    await ps.publish("big", { id: 199, pad });
    expect(t.lookup(["id"], [199])).toHaveLength(1);
    t.close();
  });

  test("DATASOURCE and KEY are required", () => {
    const ps = new MemoryPubSub();
    expect(() => new MemoryLookup({ key: "id" }, ps)).toThrow("datasource(topic) is required");
    expect(() => new MemoryLookup({ datasource: "x" }, ps)).toThrow("key is required for lookup source");
  });
});

test("simulator lookup returns every data row matching all keys, integers as int64", () => {
  const s = new SimulatorLookup({ data: [{ id: 1, name: "a" }, { id: 2, name: "b", k: "x" }, { id: 2, name: "c", k: "y" }] });
  expect(s.lookup(["id"], [2n]).map((r) => r.name)).toEqual(["b", "c"]);
  expect(s.lookup(["id", "k"], [2n, "y"])).toEqual([{ id: 2n, name: "c", k: "y" }]);
  expect(s.lookup(["id"], ["1"])).toEqual([]);
  expect(() => new SimulatorLookup({ data: "nope" })).toThrow("simulator data should be an array of objects");
});

test("an unknown lookup type is not supported", () => {
  const env = createRuntimeEnv({ log: () => {} });
  expect(() => createLookupSource("mqtt", {}, env)).toThrow("lookup source type mqtt is not supported");
});

test("a host without a runtime env opens a lookup table with createLookupEnv: its own pub/sub feeds a memory table", async () => {
  const env = createLookupEnv({ etcDir: undefined, baseDir: process.cwd(), outbound: createNetGuard(), log: () => {} });
  const c = parseStatement('CREATE TABLE t () WITH (TYPE="memory", DATASOURCE="lenv/t", KIND="lookup", KEY="id")', createFunctionRegistry()) as CreateStatement;
  const table = await openLookupTable(streamDef(c), env);
  await env.pubsub.publish("lenv/t", { id: 1n, v: "a" });
  expect(await table.lookup(["id"], [1n])).toEqual([{ id: 1n, v: "a" }]);
  await table.close();
});

/** A source that counts queries; `async` answers through a promise. */
class Counting implements LookupSource {
  calls = 0;
  rows = new Map<string, Obj[]>();
  constructor(private readonly async: boolean) {}
  open(): void {}
  lookup(_keys: readonly string[], values: readonly Value[]): Obj[] | Promise<Obj[]> {
    this.calls++;
    const r = this.rows.get(String(values[0])) ?? [];
    return this.async ? Promise.resolve(r) : r;
  }
  close(): void {}
}

describe("the lookup cache", () => {
  test("conf: off unless lookup.cache; cacheTtl as a Go duration (default 5m)", () => {
    expect(lookupCacheConf({})).toBeUndefined();
    expect(lookupCacheConf({ lookup: { cache: false } })).toBeUndefined();
    expect(lookupCacheConf({ lookup: { cache: true } })).toEqual({ ttlMs: 300_000, missingKey: false });
    expect(lookupCacheConf({ Lookup: { Cache: true, cacheTtl: "2s", cacheMissingKey: true } })).toEqual({ ttlMs: 2000, missingKey: true });
  });

  test.each([false, true])("hits within the TTL, expires after it, caches misses only with cacheMissingKey (async %p)", async (async) => {
    let now = 0;
    const inner = new Counting(async);
    inner.rows.set("1", [{ id: 1n }]);
    const c = new CachedLookup(inner, { ttlMs: 1000, missingKey: false }, () => now);
    expect(await c.lookup(["id"], [1n])).toEqual([{ id: 1n }]);
    expect(await c.lookup(["id"], [1n])).toEqual([{ id: 1n }]);
    expect(inner.calls).toBe(1);
    now = 1000;
    await c.lookup(["id"], [1n]);
    expect(inner.calls).toBe(2);
    await c.lookup(["id"], [9n]);
    await c.lookup(["id"], [9n]);
    expect(inner.calls).toBe(4); // misses are not cached
    const m = new CachedLookup(inner, { ttlMs: 1000, missingKey: true }, () => now);
    await m.lookup(["id"], [9n]);
    await m.lookup(["id"], [9n]);
    expect(inner.calls).toBe(5);
  });

  test("concurrent lookups of one key share the pending query", async () => {
    const inner = new Counting(true);
    const c = new CachedLookup(inner, { ttlMs: 1000, missingKey: false }, () => 0);
    await Promise.all([c.lookup(["id"], [1n]), c.lookup(["id"], [1n])]);
    expect(inner.calls).toBe(1);
  });
});
