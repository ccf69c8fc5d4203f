/**
 * How `estimateBytes` (lib/core/byte-budget.ts) compares with the live heap: 200,000 decoded rows of
 * three shapes held as tuples, the heap measured after a full collection (bun:jsc heapStats), and
 * the estimate summed as a window sizes its rows. The byte budgets want the estimate at or above
 * the real size (a cap then holds within its figure), and within a small factor of it.
 *   node_modules/.bin/bun bench/byte-estimate.ts
 */
import { heapStats } from "bun:jsc";
import { estimateBytes } from "../lib/core/byte-budget.ts";
import { Tuple } from "../lib/expr/row.ts";
const N = 200_000;
for (const shape of ["small", "wide", "nested"]) {
  const lines: string[] = [];
  for (let i = 0; i < N; i++) {
    const o = shape === "small" ? { a: i, b: i / 3, s: `device-${i % 1000}` } : shape === "wide" ? Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`f${k}`, k % 2 ? `v${i}-${k}` : i + k])) : { id: i, tags: ["x", "y", `t${i}`], pos: { lat: i / 7, lon: i / 11, alt: { m: i } } };
    lines.push(JSON.stringify(o));
  }
  Bun.gc(true);
  const before = heapStats().heapSize;
  const keep: Tuple[] = new Array(N);
  let est = 0;
  for (let i = 0; i < N; i++) { const t = new Tuple(JSON.parse(lines[i]!), null, i, "s"); keep[i] = t; est += 80 + estimateBytes(t.data); }
  Bun.gc(true);
  const real = heapStats().heapSize - before;
  console.log(shape, "real B/row", (real / N).toFixed(0), "estimate B/row", (est / N).toFixed(0), "ratio est/real", (est / real).toFixed(2));
  keep.length = 0;
}
