import { describe, expect, test } from "bun:test";
import { RowError } from "../../lib/errors.ts";
import { callFailure, invoke } from "../../lib/functions/index.ts";
import { ekuiperAccumulator } from "../../lib/functions/inc-ekuiper.ts";
import type { Accumulator } from "../../lib/functions/registry.ts";
import type { Value } from "../../lib/value/values.ts";
import type { Expr } from "../../lib/sql/ast.ts";
import { ctxFor } from "./env.ts";
import { bool, call, cmp, col, def, int, star, str, unit, validate } from "./invoke-helpers.ts";

type Case = [name: string, args: Value[][], want: Value | { err: string }];

const err = (fn: string, m: string) => ({ err: `call func ${fn} error: ${m}` });
const ints = [100n, 150n, 200n];
const withNulls = [100n, 150n, null, 200n, null];
const words = ["foo", "bar", "self"];

const cases: Case[] = [
  ["count", [[1n, null]], 1n],
  ["count", [[null]], 0n],
  ["count", [[]], null],
  ["count", [[{ a: 1n }, { a: 2n }]], 2n],

  ["sum", [[1n, 2n, null]], 3n],
  ["sum", [[1n, 2.9]], 3n], // later floats truncated on the int path
  ["sum", [[1.5, 2.25]], 3.75],
  ["sum", [[null]], null],
  ["sum", [[9223372036854775807n, 1n]], -9223372036854775808n],
  ["sum", [[1.5, 2n]], err("sum", "requires float64 but found int64(2)")],
  ["sum", [[1n, "x"]], err("sum", "requires int but found string(x)")],
  ["sum", [[null, "x", 1n]], err("sum", "run sum function error: found invalid arg string(x)")],

  ["avg", [ints], 150n],
  ["avg", [withNulls], 150n],
  ["avg", [[1n, 2n]], 1n], // integer division [quirk]
  ["avg", [[1n, null]], 1n],
  ["avg", [[1.0, 2.0]], 1.5],
  ["avg", [[null]], null],
  ["avg", [words], err("avg", "run avg function error: found invalid arg string(foo)")],

  ["max", [ints], 200n],
  ["max", [withNulls], 200n],
  ["max", [[1n, 4.2]], 4n],
  ["max", [[1.5, 4.25]], 4.25],
  ["max", [[1.5, 3n]], err("max", "requires float64 but found int64(3)")],
  ["max", [[1n, "4"]], err("max", "requires int64 but found string(4)")],
  ["max", [words], "self"],
  ["max", [["a", 1n]], err("max", "requires string but found int64(1)")],
  ["max", [[true]], err("max", "run max function error: found invalid arg bool(true)")],
  ["max", [[null]], null],
  ["min", [ints], 100n],
  ["min", [words], "bar"],
  ["min", [[null, 2n, 1n, null]], 1n],

  ["collect", [[1n, null, "a"]], [1n, null, "a"]],
  ["collect", [[]], null],
  ["merge_agg", [[{ foo: "bar", a: 123n }, { foo1: "bar", a: 243n }, { foo: "bar1", a: 342n }]], { a: 342n, foo: "bar1", foo1: "bar" }],
  ["merge_agg", [[100n, 150n]], null],
  ["merge_agg", [[{}, null]], null],

  ["last_value", [[1n, 2n, null], [true, true, true]], 2n],
  ["last_value", [[1n, 2n, null], [false, false, false]], null],
  ["last_value", [[null, null], [true, true]], null],
  ["last_value", [[1n, 2n], [null, true]], 2n],
  ["last_value", [[1n], ["x"]], err("last_value", "the second parameter requires bool but found string(x)")],

  ["deduplicate", [[1n, 2n, 1n], [true, true, true], [{ r: 1n }, { r: 2n }, { r: 3n }]], [{ r: 1n }, { r: 2n }]],
  ["deduplicate", [[1n, 2n, 3n], [false, false, false], [{ r: 1n }, { r: 2n }, { r: 3n }]], { r: 3n }],
  ["deduplicate", [[1n, 2n, 1n], [false, false, false], [{ r: 1n }, { r: 2n }, { r: 3n }]], null],
  ["deduplicate", [[1n], ["x"], [{ r: 1n }]], err("deduplicate", "Invalid argument type found.")],

  ["stddev", [ints], 40.824829046386306],
  ["stddev", [withNulls], 40.824829046386306],
  ["stddevs", [ints], 50],
  ["var", [ints], 1666.6666666666667],
  ["vars", [ints], 2500],
  ["vars", [[5n]], NaN],
  ["var", [[null]], null],
  ["stddev", [words], err("stddev", "requires float64 slice but found []interface {}([foo bar self])")],

  ["median", [[5n]], 5n],
  ["median", [[9n, 1n, 5n, 3n, 7n]], 5n],
  ["median", [[4n, 1n, 2n, 3n]], 2.5],
  ["median", [[9.9, 1.1, 5.5, 3.3, 7.7]], 5.5],
  ["median", [[1.0, null, 2.0]], 1.5],
  ["median", [[1n, null]], err("median", "cannot convert []interface {}([1 <nil>]) to int slice for the 1 element: cannot convert <nil>(<nil>) to int64")],
  ["median", [[null, 1n]], err("median", "<nil> should be number")],
  ["median", [["a"]], err("median", "a should be number")],

  ["percentile_cont", [ints, [0.5, 0.5, 0.5]], 125],
  ["percentile_cont", [[100n, 150n, null, 200n], [0.5, 0.5, 0.5, 0.5]], 125],
  ["percentile_cont", [[7n], [5n]], 7],
  ["percentile_cont", [ints, [1.5, 1.5, 1.5]], err("percentile_cont", "percentile exec with error: Input is outside of range.")],
  ["percentile_cont", [ints, [0.1, 0.1, 0.1]], err("percentile_cont", "percentile exec with error: Input is outside of range.")],
  ["percentile_cont", [ints, ["x", "x", "x"]], err("percentile_cont", "the second parameter requires float64 but found string(x)")],
  ["percentile_disc", [ints, [0.5, 0.5, 0.5]], 150],
  ["percentile_disc", [ints, [1n, 1n, 1n]], 200],
  ["percentile_disc", [ints, [0n, 0n, 0n]], 100],
  ["percentile_disc", [ints, [-1n, -1n, -1n]], err("percentile_disc", "PopulationVariance exec with error: Input is outside of range.")],
  ["percentile_disc", [words, [0.25, 0.25, 0.25]], err("percentile_disc", "requires float64 slice but found []interface {}([foo bar self])")],
];

describe("aggregate functions over a group", () => {
  test.each(cases)("%s(%p)", (name, args, want) => {
    expect(call(name, args)).toEqual(want);
  });
});

type VCase = [name: string, args: Expr[], want: string | undefined];

const validators: VCase[] = [
  ["avg", [str("a")], "Expect number - float or int type for parameter 1"],
  ["sum", [col("a"), col("b")], "Expect 1 arguments but found 2."],
  ["max", [unit("SS")], "Expect number - float or int type for parameter 1"],
  ["count", [star()], undefined],
  ["count", [], "Expect 1 arguments but found 0."],
  ["collect", [str("a")], undefined],
  ["percentile_cont", [col("a")], "Expect 2 arguments but found 1."],
  ["percentile_disc", [col("a"), str("x")], "Expect number - float or int type for parameter 2"],
  ["deduplicate", [col("a"), col("b"), bool(true)], "Expect 2 arguments but found 3."],
  ["deduplicate", [col("a"), str("string")], "Expect bool type for parameter 2"],
  ["deduplicate", [col("a"), cmp()], undefined],
  ["last_value", [bool(true)], "Expect 2 arguments but found 1."],
  ["last_value", [str("foo"), bool(true)], undefined],
  ["last_value", [col("a"), int(1)], "Expect bool type for parameter 2"],
  // eKuiper takes only a boolean literal or comparison as the flag: a column is a plan error.
  ["last_value", [col("a"), col("b")], "Expect bool type for parameter 2"],
  ["deduplicate", [col("a"), col("b")], "Expect bool type for parameter 2"],
  ["last_value", [col("a"), bool(false)], undefined],
  ["last_hit_count", [col("a")], "Expect 0 arguments but found 1."],
  ["last_agg_hit_time", [], undefined],
];

describe("aggregate validators", () => {
  test.each(validators)("%s %#", (name, args, want) => {
    expect(validate(name, args)).toBe(want);
  });
});

// ---------------------------------------------------------------------------------------------
// The incremental accumulator must agree with the buffered exec on every input.

const INCREMENTAL = ["count", "sum", "avg", "min", "max", "collect", "merge_agg", "last_value"];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

type Gen = (r: () => number) => Value;
const pick = <T>(r: () => number, xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
const genInt: Gen = (r) => BigInt(Math.floor((r() - 0.5) * 2000));
const genFloat: Gen = (r) => pick(r, [(r() - 0.5) * 1000, 0.5, -0, 3, NaN]);
const genStr: Gen = (r) => pick(r, ["a", "b", "foo", "", "é", "\u{1F600}", "\uff01"]);
const genNull: Gen = () => null;
const genOther: Gen = (r) => pick<Value>(r, [true, false, [1n], { a: 1n }, { b: "x" }, {}]);
const genBig: Gen = (r) => pick(r, [9223372036854775807n, -9223372036854775808n, 1n]);

/** Families of arrays: homogeneous with nulls, and mixed. */
const FAMILIES: Gen[][] = [
  [genInt, genNull],
  [genFloat, genNull],
  [genStr, genNull],
  [genBig, genInt],
  [genInt, genFloat, genNull],
  [genInt, genFloat, genStr, genNull, genOther],
  [genOther, genNull],
];

function outcome(run: () => Value): { ok: Value } | { err: string } {
  try {
    return { ok: run() };
  } catch (e) {
    if (e instanceof RowError) return { err: e.message };
    throw e;
  }
}

describe("accumulators equal exec", () => {
  test.each(INCREMENTAL)("%s", (name) => {
    const d = def(name);
    expect(d.accumulator).toBeDefined();
    expect(d.incremental).toBe(true);
    const r = rng(name.length * 7919);
    for (let iter = 0; iter < 600; iter++) {
      const fam = FAMILIES[iter % FAMILIES.length]!;
      const len = Math.floor(r() * 8);
      const xs: Value[] = [];
      const flags: Value[] = [];
      for (let i = 0; i < len; i++) {
        xs.push(pick(r, fam)(r));
        flags.push(pick<Value>(r, [true, false, null, null, "x"]));
      }
      const args: Value[][] = name === "last_value" ? [xs, flags] : [xs];
      const ctx = ctxFor(name);
      const viaExec = outcome(() => invoke(d, args, ctx));
      const viaAcc = outcome(() => {
        const acc = d.accumulator!();
        for (let i = 0; i < len; i++) acc.add(args.map((a) => a[i]!));
        try {
          return acc.value();
        } catch (e) {
          throw callFailure(ctx, e);
        }
      });
      expect(viaAcc).toEqual(viaExec);
    }
  });
});

describe("a reset accumulator starts over", () => {
  // Incremental windows reopen a key's group for the next window instead of building a new one.
  const factories: [string, () => Accumulator][] = [
    ...INCREMENTAL.map((n): [string, () => Accumulator] => [n, def(n).accumulator!]),
    ...INCREMENTAL.map((n): [string, () => Accumulator] => [`inc_${n}`, ekuiperAccumulator(n)]),
  ];
  test.each(factories)("%s equals a fresh accumulator, and leaves values it returned as they were", (name, make) => {
    const r = rng(name.length * 104729);
    const reused = make();
    let before: { held: Value; copy: string } | null = null;
    for (let iter = 0; iter < 300; iter++) {
      const fam = FAMILIES[iter % FAMILIES.length]!;
      const len = Math.floor(r() * 8);
      const rows: Value[][] = [];
      for (let i = 0; i < len; i++) rows.push([pick(r, fam)(r), pick<Value>(r, [true, false, null, null, "x"])]);
      reused.reset();
      const fresh = make();
      for (const row of rows) {
        reused.add(row.slice());
        fresh.add(row.slice());
      }
      const got = outcome(() => reused.value());
      expect(got).toEqual(outcome(() => fresh.value()));
      expect(reused.snapshot()).toEqual(fresh.snapshot());
      if (before !== null) expect(Bun.inspect(before.held)).toBe(before.copy);
      before = "ok" in got ? { held: got.ok, copy: Bun.inspect(got.ok) } : null;
    }
  });
});
