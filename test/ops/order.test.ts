/** ORDER BY's sort (sortRows): keys of one JS type take a direct comparison; it must order as `compare` does. */
import { expect, test } from "bun:test";
import { compare } from "../../lib/expr/ops.ts";
import { Tuple } from "../../lib/expr/row.ts";
import { sortRows } from "../../lib/ops/order.ts";
import type { SortKey } from "../../lib/plan/specs.ts";
import type { Value } from "../../lib/value/values.ts";
import { prng } from "../helpers/prng.ts";

/** The reference: a stable sort comparing with `compare`, nulls last in both directions. */
function reference(values: Value[][], ascending: boolean[]): number[] {
  const idx = values.map((_, i) => i);
  return idx.sort((a, b) => {
    for (let k = 0; k < ascending.length; k++) {
      const x = values[a]![k]!;
      const y = values[b]![k]!;
      if (x === null || y === null) {
        if (x === y) continue;
        return x === null ? 1 : -1;
      }
      if (compare("<", x, y)) return ascending[k] ? -1 : 1;
      if (compare("<", y, x)) return ascending[k] ? 1 : -1;
    }
    return a - b;
  });
}

const r = prng(11);
const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
const columns: Record<string, () => Value> = {
  floats: () => pick([null, NaN, -0, 0, 1.5, -2.25, Math.floor(r() * 10) / 2]),
  ints: () => pick([null, 0n, -3n, 9007199254740993n, BigInt(Math.floor(r() * 10))]),
  mixed: () => pick([null, 1, 1n, 2.5, 9007199254740993n, Math.floor(r() * 5)]),
  strings: () => pick([null, "", "a", "B", "é", "😀", "\uffff", "dev_" + Math.floor(r() * 10)]),
};

for (const [name, gen] of Object.entries(columns)) {
  test(`${name}: ordered as compare orders them, ties by arrival, nulls last (both directions, two keys)`, () => {
    for (const asc of [[true, true], [false, true], [true, false]]) {
      const values = Array.from({ length: 400 }, () => [gen(), columns.floats!()]);
      const rows = values.map((v, i) => new Tuple({ a: v[0]!, b: v[1]!, i }, null, 0, "s"));
      const keys = asc.map((ascending, k) => ({ eval: (t: Tuple) => t.data[k === 0 ? "a" : "b"] ?? null, ascending })) as unknown as SortKey[];
      const got = sortRows(rows, keys, { window: null }).map((t) => t.data.i);
      expect(got).toEqual(reference(values, asc));
    }
  });
}
