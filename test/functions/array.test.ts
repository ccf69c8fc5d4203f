import { describe, expect, test } from "bun:test";
import { DateTime, Duration } from "../../lib/value/values.ts";
import { UTC } from "../../lib/value/time.ts";
import { call } from "./invoke-helpers.ts";
import { runFixture } from "./fixture-run.ts";

describe("array functions", () => {
  runFixture("array.json");

  test("array_shuffle returns a new permutation", () => {
    const input = [1n, 2n, 3n, 4n, 5n];
    const out = call("array_shuffle", [input]) as bigint[];
    expect(out).not.toBe(input);
    expect([...out].sort()).toEqual(input);
  });

  test("array_remove does not mutate its input", () => {
    const input = [1n, 2n, 1n];
    call("array_remove", [input, 1n]);
    expect(input).toEqual([1n, 2n, 1n]);
  });

  test("NaN never equals itself in set functions", () => {
    const r = call("array_union", [[NaN, NaN], [NaN]]) as number[];
    expect(r.length).toBe(3);
    expect(call("array_position", [[NaN], NaN])).toBe(-1n);
  });

  test("time values are hashable set elements, bytes are not", () => {
    const t = new DateTime(1000, 0, UTC);
    const d = new Duration(5n);
    expect(call("array_union", [[t, d], [new DateTime(1000, 0, UTC), new Duration(5n)]])).toEqual([t, d]);
    expect(call("array_except", [[new Uint8Array([1])], null])).toEqual({
      err: "call func array_except error: runtime error: hash of unhashable type []uint8",
    });
  });

  test("array_map runs each element through the named function's body", () => {
    expect(call("array_map", ["upper", ["a", "b"]])).toEqual(["A", "B"]);
    expect(call("array_map", ["round", []])).toBeNull();
  });
});
