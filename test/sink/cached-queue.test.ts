/**
 * The cache queue as a write-through journal (cached-queue.ts) on a real sqlite file: what a
 * flush wrote survives the loss of the process (a fresh queue on the same file, no stop), pages
 * go once sent, the disk budget drops exactly, and order holds across tiers under any
 * interleaving of pushes, sends and restarts.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CachedQueue } from "../../lib/sink/cached-queue.ts";
import type { CacheConf } from "../../lib/sink/common.ts";
import { SinkItem } from "../../lib/sink/connector.ts";
import { decodePage, encodePage } from "../../lib/sink/queue.ts";
import { cacheDb, SinkCacheStore } from "../../lib/store/sink-cache.ts";

function conf(memoryCacheThreshold: number, bufferPageSize: number, maxDiskCache: number): CacheConf {
  return {
    enableCache: true,
    memoryCacheThreshold,
    maxDiskCache,
    bufferPageSize,
    resendInterval: 0,
    cleanCacheAtStop: false,
    resendAlterQueue: false,
    resendPriority: 0,
    resendIndicatorField: "",
    resendDestination: "",
  };
}

/** A fresh queue on `dir`'s cache.db, as a new process would open it. */
function open(dir: string, c: CacheConf, drops: number[] = []): CachedQueue {
  return new CachedQueue(c, new SinkCacheStore(cacheDb(dir), "sink/r/mqtt_0"), (n) => drops.push(n));
}

const item = (n: number) => new SinkItem(JSON.stringify({ n }), null, 1);
const num = (i: SinkItem | undefined) => (i ? (JSON.parse(i.payload as string) as { n: number }).n : undefined);

/** Sends (peek + shift) up to `k` items; returns their numbers. */
function send(q: CachedQueue, k = Infinity): number[] {
  const out: number[] = [];
  for (let i = q.peek(); i !== undefined && out.length < k; i = q.peek()) {
    out.push(num(i)!);
    q.shift();
  }
  return out;
}

/** Rows on disk for the test key, read through a second connection (what another process sees). */
function rows(dir: string): { seq: number; n: number }[] {
  const db = new Database(join(dir, "cache.db"), { readonly: true });
  const r = db.query("SELECT seq, n FROM sink_cache WHERE key = 'sink/r/mqtt_0' ORDER BY seq").all() as { seq: number; n: number }[];
  db.close();
  return r;
}

/** Every item on disk, in order, decoded through a second connection. */
function onDisk(dir: string): number[] {
  const db = new Database(join(dir, "cache.db"), { readonly: true });
  const r = db.query("SELECT data FROM sink_cache WHERE key = 'sink/r/mqtt_0' ORDER BY seq").all() as { data: string }[];
  db.close();
  return r.flatMap((x) => decodePage(x.data).map((i) => num(i)!));
}

const tmp = () => mkdtempSync(join(tmpdir(), "floe-cq-"));

test("a flush writes every queued item, memory tier included, in one page per bufferPageSize", () => {
  const dir = tmp();
  const q = open(dir, conf(8, 4, 400));
  for (let i = 0; i < 10; i++) q.push(item(i));
  expect([q.length, q.memLength, q.diskLength]).toEqual([10, 8, 2]);
  expect(rows(dir)).toEqual([]);
  q.flush();
  expect(rows(dir)).toEqual([
    { seq: 0, n: 4 },
    { seq: 1, n: 4 },
    { seq: 2, n: 2 },
  ]);
  // A later flush appends to the partial page instead of starting a new one.
  q.push(item(10));
  q.flush();
  expect(rows(dir).at(-1)).toEqual({ seq: 2, n: 3 });
  // The process dies: a new queue on the file has all 11, in order.
  const again = open(dir, conf(8, 4, 400));
  expect(again.restored).toBe(11);
  expect(send(again)).toEqual([...Array(11).keys()]);
});

test("items queued in a tick are on disk by the next microtask without an explicit flush", async () => {
  const dir = tmp();
  const q = open(dir, conf(4, 2, 100));
  for (let i = 0; i < 5; i++) q.push(item(i));
  await Promise.resolve();
  expect(rows(dir).reduce((a, r) => a + r.n, 0)).toBe(5);
});

test("a page is deleted once all its items are sent; a kill repeats at most the head page", () => {
  const dir = tmp();
  const q = open(dir, conf(8, 4, 400));
  for (let i = 0; i < 12; i++) q.push(item(i));
  q.flush();
  expect(send(q, 6)).toEqual([0, 1, 2, 3, 4, 5]);
  // Sent pages are deleted by the next flush (the microtask after the send), in its transaction.
  expect(rows(dir).map((r) => r.seq)).toEqual([0, 1, 2]);
  q.flush();
  expect(rows(dir).map((r) => r.seq)).toEqual([1, 2]);
  // Killed here: items 4 and 5 were sent but their page remains; they come again, nothing is lost.
  expect(send(open(dir, conf(8, 4, 400)))).toEqual([4, 5, 6, 7, 8, 9, 10, 11]);
});

test("a stop keeps exactly the unsent items: the sent part of the head page is cut", () => {
  const dir = tmp();
  const q = open(dir, conf(8, 4, 400));
  for (let i = 0; i < 7; i++) q.push(item(i));
  expect(send(q, 2)).toEqual([0, 1]);
  q.stop(false);
  const again = open(dir, conf(8, 4, 400));
  expect(again.restored).toBe(5);
  expect(send(again)).toEqual([2, 3, 4, 5, 6]);
  again.stop(true);
  expect(rows(dir)).toEqual([]);
});

test("the disk budget drops whole pages beyond memory, oldest first, and counts each item", () => {
  // 8 in memory, pages of 4, at most max(2, 16/4) = 4 full pages beyond memory: of 60 items,
  // 52 spill into 13 pages and the 9 oldest are dropped (36 items).
  const dir = tmp();
  const drops: number[] = [];
  const q = open(dir, conf(8, 4, 16), drops);
  for (let i = 0; i < 60; i++) q.push(item(i));
  q.flush();
  expect(drops).toEqual(Array(9).fill(4));
  expect([q.dropped, q.length]).toEqual([36, 24]);
  expect(rows(dir).reduce((a, r) => a + r.n, 0)).toBe(24);
  const want = [...[...Array(8).keys()], ...Array.from({ length: 16 }, (_, i) => 44 + i)];
  expect(onDisk(dir)).toEqual(want);
  expect(send(q)).toEqual(want);
  q.flush();
  expect(rows(dir)).toEqual([]);
});

test("a page read back into memory keeps growing on disk and is read in order", async () => {
  const dir = tmp();
  const q = open(dir, conf(4, 4, 400));
  for (let i = 0; i < 6; i++) q.push(item(i));
  q.flush();
  // Memory frees: items 4-5 come back from the disk page, which then gains 6 and 7.
  expect(send(q, 5)).toEqual([0, 1, 2, 3, 4]);
  q.push(item(6));
  q.push(item(7));
  q.flush();
  expect(send(q)).toEqual([5, 6, 7]);
  await Promise.resolve();
  expect(rows(dir)).toEqual([]);
});

test("order and content hold across any interleaving of pushes, sends, flushes and kills", () => {
  // A seeded walk against a model array; every kill reopens the file and checks the model's
  // unsent items are all there (some sent ones may repeat: at least once, the head page only).
  let seed = 7;
  const rnd = (k: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % k);
  const dir = tmp();
  const c = conf(16, 4, 4000);
  let q = open(dir, c);
  let model: number[] = [];
  let next = 0;
  for (let step = 0; step < 3000; step++) {
    const r = rnd(100);
    if (r < 55) {
      const k = 1 + rnd(9);
      for (let i = 0; i < k; i++) {
        q.push(item(next));
        model.push(next++);
      }
    } else if (r < 90) {
      const got = send(q, 1 + rnd(12));
      expect(got).toEqual(model.slice(0, got.length));
      model = model.slice(got.length);
    } else if (r < 97) q.flush();
    else {
      // Killed (after a flush, as before any acknowledgement): the file holds every unsent item,
      // in order, after at most the sent part of the head page.
      q.flush();
      const all = onDisk(dir);
      expect(all.slice(all.length - model.length)).toEqual(model);
      expect(all.length - model.length).toBeLessThanOrEqual(4);
      q = open(dir, c);
      model = all;
    }
  }
  q.flush();
  const last = send(open(dir, c));
  expect(last.slice(last.length - model.length)).toEqual(model);
});

test("pages keep payload and prop types: bytes, text, int64, rows; older pages (one JSON array) still decode", () => {
  const items = [
    new SinkItem(new Uint8Array([1, 2, 255]), { topic: "t", qos: 1 }, 2),
    new SinkItem('say "hi"\n', null, 1),
    new SinkItem({ a: 1n, b: [1.5, "x"] }, null, 3),
    new SinkItem("x", { topic: "t", n: 7n }, 1),
  ];
  const text = encodePage(items);
  expect(text.split("\n").length).toBe(items.length + 1);
  const legacy = "[" + text.trim().split("\n").join(",") + "]";
  for (const t of [text, legacy]) {
    const back = decodePage(t);
    expect(back.map((i) => [i.payload, i.props, i.rows])).toEqual(items.map((i) => [i.payload, i.props, i.rows]));
  }
});

test("a page that vanished from disk is counted as dropped, not read as empty items", () => {
  const dir = tmp();
  const drops: number[] = [];
  const q = open(dir, conf(4, 4, 400), drops);
  for (let i = 0; i < 12; i++) q.push(item(i));
  q.flush();
  const db = new Database(join(dir, "cache.db"));
  db.run("DELETE FROM sink_cache WHERE key = 'sink/r/mqtt_0' AND seq = 1");
  db.close();
  expect(send(q)).toEqual([0, 1, 2, 3, 8, 9, 10, 11]);
  expect([drops, q.dropped, q.length]).toEqual([[4], 4, 0]);
});

test("an item's emission key (a JetStream message id) survives its cache page, in every encoding of the item", () => {
  const items = [
    new SinkItem("text", null, 1, null, null, "e1-1"),
    new SinkItem(new Uint8Array([1, 2]), { subject: "a" }, 1, null, null, "e1-2"),
    new SinkItem({ a: 1 }, null, 1, null, null, "e1-3"),
    new SinkItem("big", { n: 5n }, 1, null, null, "e1-4"),
    new SinkItem("plain", null, 1),
  ];
  const back = decodePage(encodePage(items));
  expect(back.map((i) => i.key)).toEqual(["e1-1", "e1-2", "e1-3", "e1-4", ""]);
  expect(back.map((i) => i.payload)).toEqual(items.map((i) => i.payload));
  expect(back[3]!.props).toEqual({ n: 5n });
});
