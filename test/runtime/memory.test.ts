import { expect, test } from "bun:test";
import { anonymousBytes, MemoryGovernor, residentBytes } from "../../lib/runtime/memory.ts";

test("the governor requests a collection only above its headroom, then waits for it to settle", async () => {
  let asked = 0;
  // A headroom ≤ 0 turns the governor off.
  const g = new MemoryGovernor(-1, 1, 50, () => asked++, 0);
  g.check();
  expect(asked).toBe(0);
  g.check();
  expect(asked).toBe(0);
  const on = new MemoryGovernor(1, 1, 50, () => asked++, 0);
  on.check(); // the first reading sets the floor
  const junk: number[][] = [];
  for (let i = 0; i < 40; i++) junk.push(new Array(100_000).fill(i));
  on.check();
  expect(asked).toBe(1);
  on.check(); // settling: no second request
  expect(asked).toBe(1);
  // A fixed wait: time is the subject (the 50 ms settle window must pass).
  await Bun.sleep(60);
  on.check(); // the settle window ends: the lowest RSS seen becomes the floor
  expect(on.collections).toBe(1);
  expect(junk.length).toBe(40);
});

test("RSS is read at most once per interval, however many batches pass", () => {
  let reads = 0;
  const g = new MemoryGovernor(1 << 30, 1, 0, () => {}, 60_000, () => (reads++, residentBytes()));
  for (let i = 0; i < 1000; i++) g.check();
  expect(reads).toBe(1);
});

test("residentBytes is the runtime's RSS figure, read again each time", () => {
  const a = residentBytes();
  const b = process.memoryUsage.rss();
  expect(Math.abs(a - b)).toBeLessThan(4 << 20);
  // 64 MiB written byte by byte: more than the allocator can have kept resident from earlier
  // tests' garbage, so RSS must rise (an array of numbers may land on pages already resident).
  const held = Buffer.allocUnsafeSlow(64 << 20).fill(7);
  const c = residentBytes();
  expect(c).toBeGreaterThan(a + (16 << 20));
  expect(Math.abs(c - process.memoryUsage.rss())).toBeLessThan(4 << 20);
  expect(held[held.length - 1]).toBe(7);
});

test("idle ticks count the periods with no batch processed", () => {
  const g = new MemoryGovernor(0, 1, 0, () => {}, 0);
  expect(g.idleTick()).toBe(1);
  expect(g.idleTick()).toBe(2);
  g.check();
  expect(g.idleTick()).toBe(0);
  expect(g.idleTick()).toBe(1);
});

test("anonymousBytes is RSS without the file-backed pages (RssAnon)", () => {
  const status = () => {
    const s = require("node:fs").readFileSync("/proc/self/status", "utf8") as string;
    return { anon: Number(/RssAnon:\s+(\d+)/.exec(s)![1]) * 1024, file: Number(/RssFile:\s+(\d+)/.exec(s)![1]) * 1024 };
  };
  const a = anonymousBytes();
  const s = status();
  expect(Math.abs(a - s.anon)).toBeLessThan(4 << 20);
  expect(residentBytes() - a).toBeGreaterThan(s.file - (4 << 20));
  const held = Buffer.allocUnsafeSlow(32 << 20).fill(3);
  expect(anonymousBytes()).toBeGreaterThan(a + (16 << 20));
  expect(held[0]).toBe(3);
});
