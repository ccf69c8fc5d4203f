/**
 * ORDER BY's sort of one window's 10,000 groups (sortRows, ops/order.ts): the
 * median time of 30 sorts per key type (floats, int64 bigints, strings). `--root` runs another
 * checkout's lib/ in this same process shape, so before and after can be set side by side.
 *
 *   node_modules/.bin/bun bench/order-sort.ts [--root DIR] [--rows 10000]
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values: a } = parseArgs({ options: { root: { type: "string" }, rows: { type: "string", default: "10000" } } });
const ROOT = resolve(a.root ?? join(import.meta.dir, ".."));
const n = Number(a.rows);
const { sortRows } = await import(join(ROOT, "lib/ops/order.ts"));
const { Tuple } = await import(join(ROOT, "lib/expr/row.ts"));

const value = (kind: string, i: number) => (kind === "float" ? Math.sin(i) * 100 : kind === "int" ? BigInt((i * 7919) % 10007) : "dev_" + ((i * 7919) % 10007));
const out: string[] = [];
for (const kind of ["float", "int", "string"]) {
  const rows = Array.from({ length: n }, (_, i) => new Tuple({ v: value(kind, i) }, null, 0, "s"));
  const keys = [{ eval: (r: { data: { v: unknown } }) => r.data.v, ascending: true }];
  const ms: number[] = [];
  for (let rep = 0; rep < 30; rep++) {
    const t0 = performance.now();
    sortRows(rows, keys, { window: null });
    ms.push(performance.now() - t0);
  }
  ms.sort((x, y) => x - y);
  out.push(`${kind} ${ms[ms.length >> 1]!.toFixed(2)} ms`);
}
console.log(`${ROOT}: sort of ${n} rows by one key, median of 30: ${out.join(", ")}`);
