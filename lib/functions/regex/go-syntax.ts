/**
 * The few places where re2js's parser (a port of an older Go regexp/syntax) and Go 1.25 disagree,
 * bridged by a rewrite of the pattern text before re2js parses it:
 * - `\p{name}` is looked up as Go 1.25 does (loosely, long aliases, Go's `C` without `Cn`, ASCII);
 *   a name Go does not know is made one re2js does not know either;
 * - a capture name used twice is legal in Go: later groups of that name lose the name in the
 *   rewritten text, and the names by group index are kept here for `$name` expansion.
 * Everything else (syntax, errors, semantics) is re2js's, which follows Go's regexp.
 */
import { unicodeClass } from "./unicode-names.ts";

export interface GoRewrite {
  /** The pattern handed to re2js. */
  readonly source: string;
  /** Capture names by group index; index 0 (the whole match) and unnamed groups are "". */
  readonly names: readonly string[];
  /** [rewritten text, original text] pairs, to show an error's fragment as the user wrote it. */
  readonly swaps: ReadonlyArray<readonly [string, string]>;
}

const NAME_CHAR = /^[A-Za-z0-9_]+$/;
const PROPERTY_ATOM = /^\\[pP]\{[^}]*\}$/;

/** Rewrites a Go pattern for re2js; a pattern with nothing to bridge comes back unchanged. */
export function rewriteGoPattern(p: string): GoRewrite {
  const names: string[] = [""];
  const swaps: Array<readonly [string, string]> = [];
  const seen = new Set<string>();
  const n = p.length;
  let out = "";
  let inClass = false;
  let i = 0;
  while (i < n) {
    const c = p[i]!;
    if (c === "\\") {
      const d = p[i + 1];
      if (d === undefined) {
        out += c;
        break;
      }
      if (d === "Q" && !inClass) {
        const e = p.indexOf("\\E", i + 2);
        const end = e < 0 ? n : e + 2;
        out += p.slice(i, end);
        i = end;
        continue;
      }
      if (d === "p" || d === "P") {
        const cls = unicodeEscape(p, i, inClass);
        if (cls) {
          out += cls.text;
          if (cls.text !== p.slice(i, cls.end)) swaps.push([cls.text, p.slice(i, cls.end)]);
          i = cls.end;
          continue;
        }
      }
      // Two UTF-16 units: a surrogate pair after `\` is copied by the next step, which is harmless.
      out += c + d;
      i += 2;
      continue;
    }
    if (inClass) {
      if (c === "[" && p[i + 1] === ":") {
        const e = p.indexOf(":]", i + 2);
        if (e >= 0) {
          out += p.slice(i, e + 2);
          i = e + 2;
          continue;
        }
      } else if (c === "]") inClass = false;
      out += c;
      i++;
      continue;
    }
    if (c === "[") {
      // Go: a `]` right after `[` or `[^` is a literal.
      let j = i + 1;
      if (p[j] === "^") j++;
      if (p[j] === "]") j++;
      out += p.slice(i, j);
      i = j;
      inClass = true;
      continue;
    }
    if (c === "(") {
      if (p[i + 1] !== "?") names.push("");
      else {
        const open = p.startsWith("(?P<", i) ? 4 : p.startsWith("(?<", i) ? 3 : 0;
        const close = open ? p.indexOf(">", i + open) : -1;
        const name = close >= 0 ? p.slice(i + open, close) : "";
        if (NAME_CHAR.test(name)) {
          names.push(name);
          if (seen.has(name)) {
            // Go allows a name twice; re2js does not: the later group is captured without a name.
            out += "(";
            i = close + 1;
            continue;
          }
          seen.add(name);
        }
      }
    }
    out += c;
    i++;
  }
  return { source: out, names, swaps };
}

interface UnicodeEscape {
  readonly text: string;
  /** Index after the escape in the original pattern. */
  readonly end: number;
}

/** `\pX`, `\p{Name}`, `\p{^Name}`, `\P…` at `i`, rendered for re2js; undefined when malformed (re2js reports it). */
function unicodeEscape(p: string, i: number, inClass: boolean): UnicodeEscape | undefined {
  let negate = p[i + 1] === "P";
  let name: string;
  let end: number;
  if (p[i + 2] === "{") {
    const close = p.indexOf("}", i + 3);
    if (close < 0) return undefined;
    name = p.slice(i + 3, close);
    end = close + 1;
  } else {
    const cp = p.codePointAt(i + 2);
    if (cp === undefined) return undefined;
    name = String.fromCodePoint(cp);
    end = i + 2 + name.length;
  }
  const raw = name;
  if (name.startsWith("^")) {
    negate = !negate;
    name = name.slice(1);
  }
  const cls = unicodeClass(name);
  // A name unknown to Go: an invalid name re2js rejects, shown back as written (see `swaps`).
  if (!cls) return { text: `\\${p[i + 1]}{${raw}\u0000}`, end };
  const atoms = negate ? cls.neg : cls.pos;
  if (inClass) return { text: atoms.join(""), end };
  if (atoms.length === 1 && PROPERTY_ATOM.test(atoms[0]!)) return { text: atoms[0]!, end };
  return { text: `[${atoms.join("")}]`, end };
}
