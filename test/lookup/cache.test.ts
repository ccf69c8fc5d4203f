/** The lookup cache (rules-and-sinks.md §11.3, `lookup`: cache, cacheTtl, cacheMissingKey) in front of a lookup source. */
import { describe, expect, test } from "bun:test";
import type { Obj, Value } from "../../lib/value/values.ts";
import { CachedLookup, lookupCacheConf } from "../../lib/lookup/cache.ts";
import type { LookupSource } from "../../lib/lookup/table.ts";

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
