/**
 * The columns of count, sum, avg, max and min (lib/functions/agg-fold.ts CountColumn, NumColumn):
 * each slot must yield what its own accumulator (CountFold, NumFold) yields over the same values —
 * the float path in arrays, the int64, string and error paths after a slot moves to a NumFold —
 * with the accumulator's snapshot, through reset, restore and a move to another column.
 */
import { describe, expect, test } from "bun:test";
import { RowError } from "../../lib/errors.ts";
import { CountColumn, CountFold, NumColumn, NumFold, type NumOp } from "../../lib/functions/agg-fold.ts";
import type { AccColumn, Accumulator } from "../../lib/functions/registry.ts";
import type { Value } from "../../lib/value/values.ts";
import { prng } from "../helpers/prng.ts";

/** The value or the error text. */
function read(f: () => Value): string {
  try {
    return Bun.inspect(f());
  } catch (e) {
    if (!(e instanceof RowError)) throw e;
    return `error: ${e.message}`;
  }
}

/** Values mostly float64 and null; with `mixed`, now and then an int64, a string or a boolean. */
function values(seed: number, n: number, mixed: boolean): Value[] {
  const r = prng(seed);
  return Array.from({ length: n }, () => {
    const x = r();
    if (x < 0.15) return null;
    if (mixed && x < 0.18) return 7n;
    if (mixed && x < 0.2) return "s";
    if (mixed && x < 0.21) return true;
    if (x < 0.25) return -0;
    return Math.floor(r() * 1000) / 8 - 60;
  });
}

const OPS: NumOp[] = ["sum", "avg", "max", "min"];
const SLOTS = 40;

/** Feeds slot i of `col` and accumulator i alike, row by row over the slots; compares as it goes. */
function compare(col: AccColumn, make: () => Accumulator, seed: number, mixed: boolean): void {
  const accs = Array.from({ length: SLOTS }, make);
  for (let i = 0; i < SLOTS; i++) col.reset(i);
  const r = prng(seed + 100);
  const vs = values(seed, 2000, mixed);
  // Some slots start with an int64 or a string, so they leave the float path at once.
  if (mixed) {
    accs[3]!.add([5n]);
    col.add(3, [5n]);
    accs[4]!.add(["b"]);
    col.add(4, ["b"]);
  }
  for (const v of vs) {
    const i = Math.floor(r() * SLOTS);
    accs[i]!.add([v]);
    col.add(i, [v]);
  }
  for (let i = 0; i < SLOTS; i++) {
    expect(read(() => col.value(i))).toBe(read(() => accs[i]!.value()));
    expect(col.snapshot(i)).toEqual(accs[i]!.snapshot());
  }
}

describe("NumColumn yields what NumFold yields, slot by slot", () => {
  test.each(OPS)("%s over float64 values and nulls", (op) => {
    for (const seed of [1, 2, 3]) compare(new NumColumn(op), () => new NumFold(op), seed, false);
  });

  test.each(OPS)("%s with int64, string and boolean values among them (slots that move to a NumFold)", (op) => {
    for (const seed of [4, 5, 6]) {
      const col = new NumColumn(op);
      compare(col, () => new NumFold(op), seed, true);
      // Some slots met an error or another path: the comparison covered them.
      const errors = Array.from({ length: SLOTS }, (_, i) => read(() => col.value(i))).filter((t) => t.startsWith("error: "));
      expect(errors.length).toBeGreaterThan(0);
    }
  });

  test("a slot reset starts over, a restored slot and a moved slot go on as the accumulator does", () => {
    const col = new NumColumn("avg");
    for (let i = 0; i < 3; i++) col.reset(i);
    col.add(0, [1.5]);
    col.add(0, [2.5]);
    col.add(1, ["x"]);
    col.reset(1);
    expect(col.value(1)).toBeNull();
    col.add(1, [4]);
    expect(col.value(1)).toBe(4);
    const fold = new NumFold("avg");
    fold.add([1.5]);
    fold.add([2.5]);
    col.restore(2, col.snapshot(0));
    col.add(2, [5]);
    fold.add([5]);
    expect(col.value(2)).toBe(fold.value());
    expect(col.snapshot(2)).toEqual(fold.snapshot());
    const other = new NumColumn("avg");
    other.take(0, col, 2);
    other.add(0, [null]);
    fold.add([null]);
    expect(other.snapshot(0)).toEqual(fold.snapshot());
    expect(other.value(0)).toBe(fold.value());
  });

  test("an empty slot and a slot of nulls are null, a lone -0 sums to 0 and stays -0 as a max", () => {
    const sum = new NumColumn("sum");
    const max = new NumColumn("max");
    for (const c of [sum, max]) for (let i = 0; i < 2; i++) c.reset(i);
    expect(sum.value(0)).toBeNull();
    sum.add(1, [null]);
    expect(sum.value(1)).toBeNull();
    sum.add(0, [-0]);
    max.add(0, [-0]);
    expect(Object.is(sum.value(0), 0)).toBe(true);
    expect(Object.is(max.value(0), -0)).toBe(true);
  });
});

describe("CountColumn yields what CountFold yields", () => {
  test("over values and nulls, through reset, restore and a move", () => {
    for (const seed of [1, 2]) compare(new CountColumn(), () => new CountFold(), seed, true);
    const col = new CountColumn();
    col.reset(0);
    col.reset(1);
    expect(col.value(0)).toBeNull();
    col.add(0, [null]);
    expect(col.value(0)).toBe(0n);
    col.add(0, [1]);
    col.restore(1, col.snapshot(0));
    expect(col.value(1)).toBe(1n);
    const other = new CountColumn();
    other.take(5, col, 1);
    expect(other.snapshot(5)).toEqual([2, 1]);
    col.reset(0);
    expect(col.value(0)).toBeNull();
  });

  test("a slot past 2^32 − 2 rows counts on in an object", () => {
    const col = new CountColumn();
    col.reset(0);
    col.restore(0, [0xffff_fffe, 0xffff_fff0]);
    col.add(0, [1]);
    col.add(0, [null]);
    expect(col.snapshot(0)).toEqual([0xffff_fffe + 2, 0xffff_fff0 + 1]);
    expect(col.value(0)).toBe(BigInt(0xffff_fff0 + 1));
  });
});
