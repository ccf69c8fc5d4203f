import { expect, test } from "bun:test";
import { SmallMap } from "../../lib/core/small-map.ts";

test("a small map keeps one value per key, in insertion order, as a Map does", () => {
  const m = new SmallMap<string, number>();
  const ref = new Map<string, number>();
  for (const [k, v] of [["a", 1], ["b", 2], ["a", 3], ["c", 4]] as const) {
    m.set(k, v);
    ref.set(k, v);
  }
  expect(m.size).toBe(3);
  expect(m.get("a")).toBe(3);
  expect(m.get("z")).toBeUndefined();
  expect(m.has("c")).toBe(true);
  expect(m.has("z")).toBe(false);
  expect([...m]).toEqual([...ref]);
  expect([...m.keys()]).toEqual([...ref.keys()]);
  expect([...m.values()]).toEqual([...ref.values()]);
});
