/**
 * Go regular expressions for floe: compiled once per pattern text (regexp-syntax.ts translates Go's
 * RE2 dialect), matched with Go's semantics: `ReplaceAllString` with Go's empty-match rule and
 * `$name` templates (functions §8.3, §8.4), and the LIKE pattern translation (sql §5.7).
 */
import { compileLikeSource } from "../sql/like.ts";
import { RowError } from "../errors.ts";
import { GoRegexpError, translateGoRegex } from "./regex-syntax.ts";

/** A compiled Go regexp: a stateless JS RegExp (flag `u`) and a `g` twin for scanning with lastIndex. */
export class GoRegex {
  readonly re: RegExp;
  readonly global: RegExp;
  /** Capture names by group index ("" for the whole match and unnamed groups). */
  readonly names: readonly string[];
  constructor(source: string, names: readonly string[]) {
    this.re = new RegExp(source, "u");
    this.global = new RegExp(source, "gu");
    this.names = names;
  }
}

const CACHE_LIMIT = 4096;
const cache = new Map<string, GoRegex | RowError>();

function remember<T extends GoRegex | RowError>(key: string, v: T): T {
  // Patterns can come from data; a full cache is dropped rather than grown without bound.
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, v);
  return v;
}

function build(pattern: string): GoRegex | RowError {
  try {
    const t = translateGoRegex(pattern);
    return new GoRegex(t.source, t.names);
  } catch (e) {
    if (e instanceof GoRegexpError) return new RowError(e.message);
    // A pattern Go accepts but the JS engine rejects is a translation gap, reported Go-style.
    return new RowError(`error parsing regexp: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Compiles (cached) a Go pattern; throws RowError `error parsing regexp: <reason>: \`<fragment>\``. */
export function goRegex(pattern: string): GoRegex {
  let r = cache.get(pattern);
  if (r === undefined) r = remember(pattern, build(pattern));
  if (r instanceof RowError) throw r;
  return r;
}

/** The JS RegExp (flag `u`, no state) equivalent to Go's `regexp.Compile(pattern)`. */
export function compileGoRegex(pattern: string): RegExp {
  return goRegex(pattern).re;
}

const likeCache = new Map<string, RegExp | RowError>();

/** The full-match RegExp of a LIKE pattern; throws RowError `invalid LIKE pattern: <Go error>`. */
export function compileLikePattern(pattern: string): RegExp {
  let r = likeCache.get(pattern);
  if (r === undefined) {
    try {
      r = goRegex(compileLikeSource(pattern)).re;
    } catch (e) {
      r = new RowError(`invalid LIKE pattern: ${(e as RowError).message}`);
    }
    if (likeCache.size >= CACHE_LIMIT) likeCache.clear();
    likeCache.set(pattern, r);
  }
  if (r instanceof RowError) throw r;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Matching with Go semantics

/** Go `MatchString`: a match anywhere. */
export function goMatchString(re: GoRegex, s: string): boolean {
  return re.re.test(s);
}

/** Go `FindString`: the leftmost match, "" when none. */
export function goFindString(re: GoRegex, s: string): string {
  const m = re.re.exec(s);
  return m ? m[0] : "";
}

/** A `$` reference of a template: a group number or a group name. */
type TemplatePart = string | number | { readonly name: string };

const LETTER_OR_DIGIT = /[\p{L}\p{Nd}_]/u;
const templateCache = new Map<string, TemplatePart[]>();

/** Go `extract`: the name after `$` (braced or the longest run of letters, digits, `_`). */
function extract(t: string, at: number): { ref: number | { name: string }; end: number } | null {
  let i = at;
  const brace = t[i] === "{";
  if (brace) i++;
  const start = i;
  while (i < t.length) {
    const cp = t.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (!LETTER_OR_DIGIT.test(ch)) break;
    i += ch.length;
  }
  if (i === start) return null;
  const name = t.slice(start, i);
  if (brace) {
    if (t[i] !== "}") return null;
    i++;
  }
  let num = 0;
  for (let k = 0; k < name.length; k++) {
    const d = name.charCodeAt(k) - 0x30;
    if (d < 0 || d > 9 || num >= 1e8) {
      num = -1;
      break;
    }
    num = num * 10 + d;
  }
  if (name[0] === "0" && name.length > 1) num = -1;
  return { ref: num >= 0 ? num : { name }, end: i };
}

/** Pre-parses a Go replacement template (cached by text). */
function parseTemplate(t: string): TemplatePart[] {
  let parts = templateCache.get(t);
  if (parts) return parts;
  parts = [];
  let lit = "";
  let i = 0;
  for (;;) {
    const d = t.indexOf("$", i);
    if (d < 0) break;
    lit += t.slice(i, d);
    i = d + 1;
    if (t[i] === "$") {
      lit += "$";
      i++;
      continue;
    }
    const x = extract(t, i);
    if (!x) {
      lit += "$";
      continue;
    }
    if (lit) parts.push(lit);
    lit = "";
    parts.push(x.ref);
    i = x.end;
  }
  lit += t.slice(i);
  if (lit) parts.push(lit);
  if (templateCache.size >= CACHE_LIMIT) templateCache.clear();
  templateCache.set(t, parts);
  return parts;
}

function expand(parts: TemplatePart[], m: RegExpExecArray, names: readonly string[]): string {
  let out = "";
  for (const p of parts) {
    if (typeof p === "string") out += p;
    else if (typeof p === "number") out += m[p] ?? "";
    else {
      for (let i = 0; i < names.length; i++) {
        if (names[i] === p.name && m[i] !== undefined) {
          out += m[i];
          break;
        }
      }
    }
  }
  return out;
}

/**
 * Go `ReplaceAllString`: non-overlapping matches left to right; an empty match right after the
 * previous match is not replaced; the scan advances at least one code point.
 */
export function goReplaceAllString(re: GoRegex, s: string, template: string): string {
  const parts = parseTemplate(template);
  const g = re.global;
  const n = s.length;
  let out = "";
  let lastMatchEnd = 0;
  let searchPos = 0;
  while (searchPos <= n) {
    g.lastIndex = searchPos;
    const m = g.exec(s);
    if (!m) break;
    const a0 = m.index;
    const a1 = a0 + m[0].length;
    out += s.slice(lastMatchEnd, a0);
    if (a1 > lastMatchEnd || a0 === 0) out += expand(parts, m, re.names);
    lastMatchEnd = a1;
    let width = 0;
    if (searchPos < n) {
      const c = s.charCodeAt(searchPos);
      width = c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(searchPos + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
    }
    if (searchPos + width > a1) searchPos += width;
    else if (searchPos + 1 > a1) searchPos++;
    else searchPos = a1;
  }
  return out + s.slice(lastMatchEnd);
}
