/** The memory lookup table (rules-and-sinks.md §10.3): fed by the memory pub/sub, shared by topic and key, bounded. */
import { describe, expect, test } from "bun:test";
import { MemoryLookup, memoryTableStats } from "../../../lib/connectors/memory/lookup.ts";
import { MemoryPubSub } from "../../../lib/connectors/memory/pubsub.ts";

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
