/**
 * A JavaScript RegExp twin for the Go patterns a backtracking engine provably runs fast on: JS
 * RegExp is 5–30× faster than re2js per match, so the common simple patterns keep it, and
 * everything else runs on re2js.
 *
 * Accepted (after re2js has accepted the pattern as Go syntax): no flags, no alternation; literal
 * characters, `.`, `\d \w \D \W`, escaped punctuation, classes of those and of ranges; groups
 * (capturing, named, `(?:`) that are not repeated; greedy quantifiers on single characters only;
 * `^` first, `$` last. Proof of speed: every quantifier whose count may vary is followed by a
 * mandatory character disjoint from the repeated one (or ends the pattern), so at every
 * backtracking point the alternative fails on its first character and one match attempt costs
 * O(characters consumed). One exception, for LIKE's `^prefix.*suffix$`: in a pattern anchored by
 * `^`, one repeat may overlap what follows if only fixed-count items follow it; each of its O(n)
 * backtracking points then costs the fixed tail. An attempt anchored by `^` is one attempt:
 * linear. An unanchored search
 * makes one attempt per start position: quadratic at worst, so it is used only on inputs of at
 * most UNANCHORED_MAX characters (≤ ~10^6 steps) and longer inputs go to re2js.
 * Semantics are Go's by construction: classes are emitted as explicit code-point ranges, `.` as
 * `[^\n]`, and JS `u`-mode `^ $ \d \w` without flags mean what Go's do.
 */

/** Longest input an unanchored JS twin is trusted with. */
export const UNANCHORED_MAX = 1024;

export interface SafeJs {
  /** JS source for `new RegExp(source, "u")`, same groups as the Go pattern. */
  readonly source: string;
  /** Starts with `^`: linear on any input. */
  readonly anchored: boolean;
}

/** Sorted, merged, inclusive code-point ranges as flat pairs [lo, hi, lo, hi, …]. */
type Ranges = number[];

const MAX = 0x10ffff;
const DIGIT: Ranges = [0x30, 0x39];
const WORD: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
const NOT_NL: Ranges = [0, 9, 11, MAX];
const PUNCT = "\\.+*?()|[]{}^$/-";

function normalize(r: Ranges): Ranges {
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < r.length; i += 2) pairs.push([r[i]!, r[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of pairs) {
    const n = out.length;
    if (n && lo <= out[n - 1]! + 1) out[n - 1] = Math.max(out[n - 1]!, hi);
    else out.push(lo, hi);
  }
  return out;
}

function complement(r: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (let i = 0; i < r.length; i += 2) {
    if (r[i]! > next) out.push(next, r[i]! - 1);
    next = r[i + 1]! + 1;
  }
  if (next <= MAX) out.push(next, MAX);
  return out;
}

function disjoint(a: Ranges, b: Ranges): boolean {
  for (let i = 0; i < a.length; i += 2)
    for (let j = 0; j < b.length; j += 2) if (a[i]! <= b[j + 1]! && b[j]! <= a[i + 1]!) return false;
  return true;
}

const hex = (c: number) => `\\u{${c.toString(16)}}`;

function classSource(r: Ranges): string {
  let s = "[";
  for (let i = 0; i < r.length; i += 2) s += r[i] === r[i + 1] ? hex(r[i]!) : `${hex(r[i]!)}-${hex(r[i + 1]!)}`;
  return s + "]";
}

interface Item {
  readonly set: Ranges;
  readonly min: number;
  readonly max: number;
}

/** Not provably safe (or not in the subset): the pattern stays on re2js. */
class Unsafe {}
const UNSAFE = new Unsafe();

class Reader {
  i = 0;
  constructor(readonly p: string) {}
  cp(): number {
    return this.p.codePointAt(this.i)!;
  }
  take(): number {
    const c = this.cp();
    this.i += c > 0xffff ? 2 : 1;
    return c;
  }
}

/** An escape outside or inside a class: a set (`\d` …) or one punctuation character. */
function escape(r: Reader): Ranges {
  r.i++; // the backslash
  const c = r.p[r.i];
  r.i++;
  switch (c) {
    case "d":
      return DIGIT;
    case "D":
      return complement(DIGIT);
    case "w":
      return WORD;
    case "W":
      return complement(WORD);
  }
  if (c !== undefined && PUNCT.includes(c)) return [c.charCodeAt(0), c.charCodeAt(0)];
  throw UNSAFE;
}

/** One class member that may be a range end: a literal or an escaped punctuation character. */
function classChar(r: Reader): number {
  if (r.p[r.i] !== "\\") return r.take();
  const s = escape(r);
  if (s.length !== 2 || s[0] !== s[1]) throw UNSAFE;
  return s[0]!;
}

function charClass(r: Reader): Ranges {
  r.i++; // [
  const negate = r.p[r.i] === "^";
  if (negate) r.i++;
  const set: Ranges = [];
  let first = true;
  for (;;) {
    const c = r.p[r.i];
    if (c === undefined) throw UNSAFE;
    if (c === "]" && !first) break;
    first = false;
    if (c === "[") throw UNSAFE; // POSIX classes and the like
    if (c === "\\" && "dDwW".includes(r.p[r.i + 1] ?? "")) {
      set.push(...escape(r));
      continue;
    }
    const lo = classChar(r);
    if (r.p[r.i] === "-" && r.p[r.i + 1] !== "]" && r.p[r.i + 1] !== undefined) {
      r.i++;
      const hi = classChar(r);
      set.push(lo, hi);
    } else set.push(lo, lo);
  }
  r.i++; // ]
  const n = normalize(set);
  return negate ? complement(n) : n;
}

const REPEAT = /^\{(\d+)(?:(,)(\d*))?\}/;

/** The quantifier after an atom (default once); lazy quantifiers are not in the subset. */
function quantifier(r: Reader): { min: number; max: number } {
  const c = r.p[r.i];
  let q: { min: number; max: number };
  if (c === "*") q = { min: 0, max: Infinity };
  else if (c === "+") q = { min: 1, max: Infinity };
  else if (c === "?") q = { min: 0, max: 1 };
  else if (c === "{") {
    const m = REPEAT.exec(r.p.slice(r.i));
    if (!m) throw UNSAFE;
    const min = Number(m[1]);
    q = { min, max: m[2] ? (m[3] ? Number(m[3]) : Infinity) : min };
    r.i += m[0].length - 1;
  } else return { min: 1, max: 1 };
  r.i++;
  if (r.p[r.i] === "?") throw UNSAFE;
  return q;
}

function fixedFrom(items: readonly Item[], k: number): boolean {
  for (let i = k; i < items.length; i++) if (items[i]!.min !== items[i]!.max) return false;
  return true;
}

function scan(p: string): SafeJs {
  const r = new Reader(p);
  const items: Item[] = [];
  let src = "";
  let depth = 0;
  let anchored = false;
  if (p[0] === "^") {
    anchored = true;
    src = "^";
    r.i = 1;
  }
  while (r.i < p.length) {
    const c = p[r.i]!;
    if (c === "(") {
      if (p.startsWith("(?:", r.i)) {
        src += "(?:";
        r.i += 3;
      } else if (p.startsWith("(?P<", r.i) || p.startsWith("(?<", r.i)) {
        // Named groups are numbered like the others; names are kept by the caller.
        r.i = p.indexOf(">", r.i) + 1;
        src += "(";
      } else if (p[r.i + 1] === "?") throw UNSAFE;
      else {
        src += "(";
        r.i++;
      }
      depth++;
      continue;
    }
    if (c === ")") {
      depth--;
      r.i++;
      if ("*+?{".includes(p[r.i] ?? "x")) throw UNSAFE;
      src += ")";
      continue;
    }
    if (c === "$") {
      if (r.i !== p.length - 1 || depth !== 0) throw UNSAFE;
      src += "$";
      r.i++;
      continue;
    }
    if (c === "|" || c === "^") throw UNSAFE;
    let set: Ranges;
    if (c === ".") {
      set = NOT_NL;
      r.i++;
    } else if (c === "[") set = charClass(r);
    else if (c === "\\") set = escape(r);
    else if ("*+?".includes(c)) throw UNSAFE;
    else {
      const cp = r.take();
      set = [cp, cp];
    }
    const q = quantifier(r);
    const atom = set.length === 2 && set[0] === set[1] ? hex(set[0]!) : classSource(set);
    src += atom + (q.min === 1 && q.max === 1 ? "" : `{${q.min},${q.max === Infinity ? "" : q.max}}`);
    items.push({ set, min: q.min, max: q.max });
  }
  let overlap = false;
  for (let k = 0; k < items.length; k++) {
    const it = items[k]!;
    if (it.min === it.max) continue;
    const next = items[k + 1];
    if (next === undefined) continue;
    if (next.min >= 1 && disjoint(it.set, next.set)) continue;
    // One overlapping repeat in an anchored pattern, followed by fixed items only (LIKE
    // "prefix%suffix"): its O(n) backtracking points each try a fixed tail: O(n × tail).
    if (!anchored || overlap || !fixedFrom(items, k + 1)) throw UNSAFE;
    overlap = true;
  }
  return { source: src, anchored };
}

/** The JS twin of a valid Go pattern, or null when it is not provably fast or not in the subset. */
export function safeJsOf(pattern: string): SafeJs | null {
  try {
    return scan(pattern);
  } catch (e) {
    if (e === UNSAFE) return null;
    throw e;
  }
}
