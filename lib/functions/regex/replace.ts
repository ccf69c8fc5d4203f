/**
 * Go `Regexp.ReplaceAllString` (functions §8.4): `$name` / `${name}` templates, non-overlapping
 * matches left to right, and Go's rule for empty matches.
 */
import { CACHE_LIMIT, type GoRegex } from "./compile.ts";
import type { MatchCursor } from "./cursor.ts";
import { Lru } from "./lru.ts";

/** A `$` reference of a template: a group number or a group name. */
type TemplatePart = string | number | { readonly name: string };

const LETTER_OR_DIGIT = /[\p{L}\p{Nd}_]/u;
const templateCache = new Lru<TemplatePart[]>(CACHE_LIMIT);

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
  templateCache.set(t, parts);
  return parts;
}

function expand(parts: TemplatePart[], m: MatchCursor, names: readonly string[]): string {
  let out = "";
  for (const p of parts) {
    if (typeof p === "string") out += p;
    else if (typeof p === "number") {
      if (p < names.length) out += m.group(p) ?? "";
    } else {
      for (let i = 1; i < names.length; i++) {
        if (names[i] !== p.name) continue;
        const g = m.group(i);
        if (g !== null) {
          out += g;
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
  const m = re.cursor(s);
  const n = s.length;
  let out = "";
  let lastMatchEnd = 0;
  let searchPos = 0;
  while (searchPos <= n) {
    // find(pos) searches from pos with the whole text as context (`^`, `\b` see what precedes).
    if (!m.find(searchPos)) break;
    const a0 = m.start();
    const a1 = m.end();
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
