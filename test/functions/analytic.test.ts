import { describe, expect, test } from "bun:test";
import { RowError } from "../../lib/errors.ts";
import type { Value } from "../../lib/value/values.ts";
import type { Expr } from "../../lib/sql/ast.ts";
import { ctxFor } from "./env.ts";
import { bool, cmp, col, def, int, num, str, unit, validate } from "./invoke-helpers.ts";

/** One row: the call's argument values, and whether OVER (WHEN …) held (default true). */
type Row = [args: Value[], valid?: boolean];
type Case = [label: string, name: string, rows: Row[], want: (Value | { err: string })[]];

/** Feeds the rows through one call site and partition, collecting each row's result or error. */
function run(name: string, rows: Row[]): (Value | { err: string })[] {
  const d = def(name);
  const ctx = ctxFor(name);
  const state = d.analytic!.init();
  return rows.map(([args, valid = true]) => {
    try {
      return d.analytic!.step(args, valid, state, ctx);
    } catch (e) {
      if (e instanceof RowError) return { err: e.message };
      throw e;
    }
  });
}

const cases: Case[] = [
  ["lag of a column", "lag", [[["a1"]], [["a1"]], [["a1"]], [["a1"]]], [null, "a1", "a1", "a1"]],
  ["lag skips nulls by default", "lag", [[["b1"]], [["b2"]], [[null]], [["b2"]]], [null, "b1", "b2", "b2"]],
  ["lag with offset and default", "lag", [[["a1", 2n, "a10"]], [["a2", 2n, "a10"]], [["a1", 2n, "a10"]], [["a1", 2n, "a10"]]], ["a10", "a10", "a1", "a2"]],
  ["lag keeping nulls", "lag", [[["b1", 1n, null, false]], [[null, 1n, null, false]], [["b3", 1n, null, false]]], [null, "b1", null]],
  ["lag over invalid rows does not advance", "lag", [[["foo"]], [["bar"], false], [["bar"]], [["foo"], false], [["foo"]]], [null, "foo", "foo", "bar", "bar"]],
  ["lag offset 0 is always null", "lag", [[["x", 0n]], [["y", 0n]]], [null, null]],
  ["lag offset must be an int", "lag", [[["x", "a"]]], [{ err: "error converting second arg x to int: cannot convert string(a) to int" }]],
  ["lag integral float offset", "lag", [[["x", 1.0]], [["y", 1.0]]], [null, "x"]],
  ["lag fourth arg must be bool", "lag", [[["x", 1n, null, 1n]]], [{ err: "The fourth arg is not a bool but got 1" }]],

  ["latest", "latest", [[[null]], [["foo"]], [[null]], [["bar"]], [[null]]], [null, "foo", "foo", "bar", "bar"]],
  ["latest with a default", "latest", [[[null, "d"]], [["x", "d"]], [[null, "d"]]], ["d", "x", "x"]],
  ["latest ignores invalid rows", "latest", [[["foo"]], [[null]], [["bar"], false], [["foo"]]], ["foo", "foo", "foo", "foo"]],

  ["changed_col", "changed_col", [[[true, "bar"]], [[true, "bar"]], [[true, "baz"]], [[false, null]], [[false, "baz"]], [[true, "foo"]]], ["bar", null, "baz", null, "baz", "foo"]],
  ["changed_col ignoring null keeps state", "changed_col", [[[true, "a"]], [[true, null]], [[true, "a"]]], ["a", null, null]],
  ["changed_col int differs from float", "changed_col", [[[true, 1n]], [[true, 1.0]], [[true, 1.0]]], [1n, 1.0, null]],
  ["changed_col deep-compares objects", "changed_col", [[[true, { a: [1n] }]], [[true, { a: [1n] }]], [[true, { a: [2n] }]]], [{ a: [1n] }, null, { a: [2n] }]],
  ["changed_col invalid row", "changed_col", [[[true, "a"], false], [[true, "a"]]], [null, "a"]],
  ["changed_col flag must be bool", "changed_col", [[["x", "a"]]], [{ err: "first arg is not a bool but got x" }]],

  ["had_changed", "had_changed", [[[true, "bar", 20n]], [[true, "baz", 44n]], [[true, "baz", 44n]], [[true, "foo", 44n]], [[true, "foo", null]], [[true, "foo", 44n]]], [true, true, false, true, false, false]],
  ["had_changed keeping nulls", "had_changed", [[[false, "bar", 20n]], [[false, "baz", null]], [[false, "baz", 44n]], [[false, "baz", 44n]], [[false, null, null]]], [true, true, true, false, true]],
  ["had_changed invalid row", "had_changed", [[[true, "a"], false], [[true, "a"]]], [false, true]],
  ["had_changed flag must be bool", "had_changed", [[["foo", "bar"]]], [{ err: "first arg is not a bool but got foo" }]],

  ["acc_count", "acc_count", [[["1"]], [[1.0]], [[null]], [[1n]]], [1n, 2n, 2n, 3n]],
  ["acc_sum", "acc_sum", [[["1"]], [[1.0]], [[1n]], [[null]], [[2.5]]], [{ err: "the value should be number" }, 1, 2, 2, 4.5]],
  ["acc_max", "acc_max", [[["1"]], [[1.0]], [[3n]], [[2n]]], [{ err: "the value should be number" }, 1, 3, 3]],
  ["acc_min rejects null", "acc_min", [[[3n]], [[null]], [[1n]]], [3, { err: "the value should be number" }, 1]],
  ["acc_avg", "acc_avg", [[[1n]], [[2n]], [[6n]]], [1, 1.5, 3]],
  ["acc_* start at zero", "acc_avg", [[[1n], false]], [0]],
  ["acc_max invalid row", "acc_max", [[[1n], false], [[2n]]], [0, 2]],
  ["acc_count invalid row", "acc_count", [[[1n], false]], [0n]],
  ["acc_sum with begin and reset", "acc_sum", [[[1n, false, false]], [[1n, true, false]], [[1n, false, false]], [[1n, false, true]], [[1n, false, false]]], [0, 1, 2, 3, 0]],
  ["acc_min with begin and reset", "acc_min", [[[1n, false, false]], [[5n, true, false]], [[4n, false, false]], [[3n, false, true]], [[2n, false, false]]], [0, 5, 4, 3, 0]],
  ["acc_avg with begin and reset", "acc_avg", [[[1n, false, false]], [[1n, true, false]], [[1n, false, false]], [[1n, false, true]], [[1n, false, false]]], [0, 1, 1, 1, 0]],
  ["acc conditions must be bool", "acc_sum", [[[1n, 1n, false]], [[1n, true, null]]], [{ err: "onBegin should be boolean" }, { err: "onReset should be boolean" }]],
];

describe("analytic functions", () => {
  test.each(cases)("%s", (_label, name, rows, want) => {
    expect(run(name, rows)).toEqual(want);
  });

  test("each partition has its own state", () => {
    const d = def("lag");
    const ctx = ctxFor("lag");
    const p1 = d.analytic!.init();
    const p2 = d.analytic!.init();
    const step = (s: unknown, v: Value) => d.analytic!.step([v], true, s, ctx);
    expect([step(p1, "foo"), step(p1, "bar"), step(p2, "bar"), step(p1, "foo"), step(p2, "foo")]).toEqual([null, "foo", null, "bar", "bar"]);
  });
});

type VCase = [name: string, args: Expr[], want: string | undefined];

const validators: VCase[] = [
  ["lag", [], "expect one two or three args but got 0"],
  ["lag", [col("a"), col("b"), col("c"), bool(true), col("e")], "expect one two or three args but got 5"],
  ["lag", [str("foo")], undefined],
  ["lag", [col("a"), col("b"), str("default value")], "Expect int type for parameter 2"],
  ["lag", [str("foo"), str("bar")], "Expect int type for parameter 2"],
  ["lag", [col("a"), num(1.5)], "Expect int type for parameter 2"],
  ["lag", [col("a"), unit("SS")], "Expect int type for parameter 2"],
  ["lag", [col("a"), int(-1)], "the index should not be a nagtive integer"],
  ["lag", [col("a"), int(2), str("d"), int(1)], "Expect bool type for parameter 4"],
  ["lag", [col("a"), int(2), str("d"), cmp()], undefined],
  ["latest", [], "expect one or two args but got 0"],
  ["latest", [col("a"), col("b"), col("c")], "expect one or two args but got 3"],
  ["changed_col", [str("foo")], "Expect 2 arguments but found 1."],
  ["changed_col", [str("foo"), str("bar")], "Expect boolean type for parameter 1"],
  ["changed_col", [bool(true), col("a")], undefined],
  ["had_changed", [str("foo")], "expect more than one arg but got 1"],
  ["had_changed", [str("foo"), str("bar"), str("baz")], "Expect bool type for parameter 1"],
  ["had_changed", [int(20), bool(true), str("baz")], "Expect bool type for parameter 1"],
  ["had_changed", [col("a"), col("b")], undefined],
  ["acc_sum", [col("a"), col("b")], "Expect 1/3 arguments but found 2."],
  ["acc_count", [col("a"), col("b"), col("c")], undefined],
];

describe("analytic validators", () => {
  test.each(validators)("%s %#", (name, args, want) => {
    expect(validate(name, args)).toBe(want);
  });
});
