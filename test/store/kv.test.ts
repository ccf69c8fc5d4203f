/** The KV store: a real sqlite file in a temp dir, WAL, namespaces, reopen. */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kv } from "../../lib/store/kv.ts";

test("set, setnx, delete and ordered entries per namespace survive a reopen", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-kv-"));
  const kv = Kv.open(dir);
  kv.set("rule", "b", "2");
  kv.set("rule", "a", "1");
  expect(kv.setnx("rule", "a", "x")).toBe(false);
  expect(kv.setnx("stream", "a", "s")).toBe(true);
  kv.set("rule", "c", "3");
  expect(kv.delete("rule", "c")).toBe(true);
  expect(kv.delete("rule", "c")).toBe(false);
  kv.close();
  const again = Kv.open(dir);
  expect(again.entries("rule")).toEqual([["a", "1"], ["b", "2"]]);
  expect(again.get("stream", "a")).toBe("s");
  expect(again.get("rule", "zzz")).toBeUndefined();
  again.close();
});

test("a transaction is all or nothing", () => {
  const kv = Kv.open(mkdtempSync(join(tmpdir(), "floe-kv-")));
  expect(() =>
    kv.transaction(() => {
      kv.set("meta", "k", "v");
      throw new Error("boom");
    }),
  ).toThrow("boom");
  expect(kv.get("meta", "k")).toBeUndefined();
  kv.close();
});

test("the journal is WAL", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-kv-"));
  const kv = Kv.open(dir);
  kv.set("meta", "x", "y");
  expect(Bun.file(join(dir, "sqliteKV.db-wal")).size).toBeGreaterThan(0);
  kv.close();
});
