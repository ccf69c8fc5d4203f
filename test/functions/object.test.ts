import { describe, expect, test } from "bun:test";
import { call } from "./invoke-helpers.ts";
import { runFixture } from "./fixture-run.ts";

describe("object functions", () => {
  runFixture("object.json");

  test("members are listed in UTF-8 byte order of the keys", () => {
    // U+FF5E sorts before U+1F600 in UTF-8, after it in UTF-16 code units.
    expect(call("keys", [{ "😀": 1n, "～": 2n, b: 3n }])).toEqual(["b", "～", "😀"]);
  });

  test("a __proto__ key becomes an own member, never the prototype", () => {
    const r = call("object", [["__proto__"], [{ polluted: true }]]) as Record<string, unknown>;
    expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
    expect(Object.keys(r)).toEqual(["__proto__"]);
  });

  test("erase and object_pick copy, the input is untouched", () => {
    const o = { a: 1n, b: { c: 2n } };
    call("erase", [o, "a"]);
    call("object_pick", [o, "b.c"]);
    expect(o).toEqual({ a: 1n, b: { c: 2n } });
  });
});
