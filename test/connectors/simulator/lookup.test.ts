/** The simulator lookup table (rules-and-sinks.md §11.10): the rows of its data matching every key. */
import { expect, test } from "bun:test";
import { SimulatorLookup } from "../../../lib/connectors/simulator/lookup.ts";

test("simulator lookup returns every data row matching all keys, integers as int64", () => {
  const s = new SimulatorLookup({ data: [{ id: 1, name: "a" }, { id: 2, name: "b", k: "x" }, { id: 2, name: "c", k: "y" }] });
  expect(s.lookup(["id"], [2n]).map((r) => r.name)).toEqual(["b", "c"]);
  expect(s.lookup(["id", "k"], [2n, "y"])).toEqual([{ id: 2n, name: "c", k: "y" }]);
  expect(s.lookup(["id"], ["1"])).toEqual([]);
  expect(() => new SimulatorLookup({ data: "nope" })).toThrow("simulator data should be an array of objects");
});
