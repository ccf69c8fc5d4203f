/**
 * What a failing `floe test` case shows: the first emission, row and field that differ, with the
 * expected and the produced value, then the two emissions in full. The first line is the message
 * the JUnit and TAP reporters carry.
 */

/** Value comparison of the conformance rules: numbers by value (~1e-9 relative), keys unordered. */
export type Equal = (a: unknown, b: unknown) => boolean;

const show = (v: unknown) => (v === undefined ? "(absent)" : JSON.stringify(v));

/** Where two rows first differ: ` field "b": want 2, got 3`, or "" when not both objects. */
function fieldDiff(want: unknown, got: unknown, equal: Equal): string {
  if (!want || !got || typeof want !== "object" || typeof got !== "object" || Array.isArray(want) || Array.isArray(got)) return `: want ${show(want)}, got ${show(got)}`;
  const w = want as Record<string, unknown>;
  const g = got as Record<string, unknown>;
  for (const k of [...Object.keys(w), ...Object.keys(g).filter((k) => !(k in w))]) {
    if (!(k in g) || !(k in w) || !equal(w[k], g[k])) return `, field ${JSON.stringify(k)}: want ${show(w[k])}, got ${show(g[k])}`;
  }
  return `: want ${show(want)}, got ${show(got)}`;
}

/** The report of emission `i`, which differs (`want`/`got` undefined: missing on that side). */
export function emissionDiff(i: number, want: unknown[] | undefined, got: unknown[] | undefined, equal: Equal, unordered: boolean): string {
  const full = `\n  want ${want === undefined ? "(none)" : JSON.stringify(want)}\n  got  ${got === undefined ? "(none)" : JSON.stringify(got)}`;
  if (want === undefined) return `emission ${i}: not expected, got ${got!.length} row(s)${full}`;
  if (got === undefined) return `emission ${i}: expected, not emitted (the rule emitted ${i} emission(s))${full}`;
  if (!Array.isArray(got) || !Array.isArray(want)) return `emission ${i}: want ${show(want)}, got ${show(got)}${full}`;
  if (unordered) return `emission ${i}: the rows differ (compared in any order)${full}`;
  for (let r = 0; r < Math.max(want.length, got.length); r++) {
    if (r >= want.length) return `emission ${i}, row ${r}: not expected, got ${show(got[r])}${full}`;
    if (r >= got.length) return `emission ${i}, row ${r}: expected ${show(want[r])}, not emitted${full}`;
    if (!equal(want[r], got[r])) return `emission ${i}, row ${r}${fieldDiff(want[r], got[r], equal)}${full}`;
  }
  return `emission ${i}: differs${full}`;
}
