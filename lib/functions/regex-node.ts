/**
 * The parse tree of a translated Go regexp and its rendering as a JS source. `fold` is the case
 * sensitivity a leaf needs; rendering wraps runs of leaves in `(?i:…)`/`(?-i:…)` where the
 * surrounding JS mode differs.
 */

export type Node =
  | { k: "leaf"; src: string; atom: boolean; fold: boolean | null }
  | { k: "group"; cap: boolean; alts: Node[][]; prod: number }
  | { k: "rep"; sub: Node; q: string; prod: number };

export function leaf(src: string, atom: boolean, fold: boolean | null): Node {
  return { k: "leaf", src, atom, fold };
}
export function classLeaf(atoms: string[], negated: boolean, fold: boolean): Node {
  if (!negated && atoms.length === 1 && /^\\[pP]\{/.test(atoms[0]!)) return leaf(atoms[0]!, true, fold);
  return leaf(`[${negated ? "^" : ""}${atoms.join("")}]`, true, fold);
}
export function prodOf(n: Node): number {
  return n.k === "leaf" ? 1 : n.prod;
}

// Rendering: `fold` is the case-insensitivity the JS engine applies at this point.

export function renderAlts(alts: Node[][], fold: boolean): string {
  let out = "";
  for (let i = 0; i < alts.length; i++) out += (i ? "|" : "") + renderConcat(alts[i]!, fold);
  return out;
}

/** Runs of items wanting the same case mode share one `(?i:…)` / `(?-i:…)` group. */
function renderConcat(items: Node[], fold: boolean): string {
  let out = "";
  let i = 0;
  while (i < items.length) {
    const want = wantFold(items[i]!);
    if (want === null || want === fold) {
      out += render(items[i]!, fold);
      i++;
      continue;
    }
    let run = "";
    while (i < items.length) {
      const w = wantFold(items[i]!);
      if (w !== null && w !== want) break;
      run += render(items[i]!, want);
      i++;
    }
    out += `(?${want ? "" : "-"}i:${run})`;
  }
  return out;
}

function wantFold(n: Node): boolean | null {
  while (n.k === "rep") n = n.sub;
  return n.k === "leaf" ? n.fold : null;
}

function render(n: Node, fold: boolean): string {
  switch (n.k) {
    case "leaf":
      return n.src;
    case "group":
      return `(${n.cap ? "" : "?:"}${renderAlts(n.alts, fold)})`;
    case "rep": {
      const sub = render(n.sub, fold);
      const atomic = n.sub.k === "group" || (n.sub.k === "leaf" && n.sub.atom);
      return (atomic ? sub : `(?:${sub})`) + n.q;
    }
  }
}

/** Translates a Go regexp to a JS source for `new RegExp(source, "u")`; throws GoRegexpError. */
