/**
 * Go regular expressions on re2js (a JavaScript port of RE2/Go regexp): linear-time matching,
 * Go's syntax and Go's error texts. A pattern is compiled once per text and kept in a bounded
 * LRU cache, because patterns may come from data.
 */
import { RE2JS, RE2JSSyntaxException } from "re2js";
import { RowError } from "../../errors.ts";
import { rewriteGoPattern, type GoRewrite } from "./go-syntax.ts";
import { Lru } from "./lru.ts";

/** A compiled Go regexp. Stateless: safe to share between rules. */
export class GoRegex {
  readonly re: RE2JS;
  /** Capture names by group index ("" for the whole match and unnamed groups). */
  readonly names: readonly string[];
  constructor(re: RE2JS, names: readonly string[]) {
    this.re = re;
    this.names = names;
  }

  /** Go `MatchString`: a match anywhere. */
  test(s: string): boolean {
    return this.re.test(s);
  }
}

/** Entries kept by each cache of compiled patterns. */
export const CACHE_LIMIT = 4096;

const cache = new Lru<GoRegex | RowError>(CACHE_LIMIT);

/** How many pattern texts the cache holds (at most CACHE_LIMIT). */
export function cachedPatterns(): number {
  return cache.size;
}

/** Go's `syntax.Error` text of an re2js parse failure, its fragment as the user wrote it. */
function goErrorText(e: RE2JSSyntaxException, pattern: string, rw: GoRewrite): string {
  let code = e.error;
  let expr = e.input;
  if (expr === null) {
    // Go: a trailing backslash has an empty fragment; "nests too deeply" and "too large" show the pattern.
    expr = code.startsWith("trailing backslash") ? "" : pattern;
  } else {
    for (const [to, from] of rw.swaps) expr = expr.split(to).join(from);
    // Go 1.22+: `(?<` or `(?P<` ending the pattern is not a named capture yet but a bad flag,
    // and the fragment ends at that flag (`<`, `P`).
    if (code === "invalid named capture" && (expr === "(?<" || expr === "(?P<") && pattern.endsWith(expr)) {
      code = "invalid or unsupported Perl syntax";
      expr = expr.slice(0, 3);
    }
  }
  return `error parsing regexp: ${code}: \`${expr}\``;
}

function build(pattern: string): GoRegex | RowError {
  const rw = rewriteGoPattern(pattern);
  let re: RE2JS;
  try {
    re = RE2JS.compile(rw.source);
  } catch (e) {
    if (e instanceof RE2JSSyntaxException) return new RowError(goErrorText(e, pattern, rw));
    return new RowError(`error parsing regexp: ${e instanceof Error ? e.message : String(e)}`);
  }
  let names = rw.names;
  if (names.length !== re.groupCount() + 1) {
    // The rewrite's group count is a bridge for duplicate names only; re2js's own count wins.
    const byIndex: string[] = new Array<string>(re.groupCount() + 1).fill("");
    for (const [name, idx] of Object.entries(re.namedGroups())) byIndex[idx] = name;
    names = byIndex;
  }
  return new GoRegex(re, names);
}

/** Compiles (cached) a Go pattern; throws RowError `error parsing regexp: <reason>: \`<fragment>\``. */
export function goRegex(pattern: string): GoRegex {
  let r = cache.get(pattern);
  if (r === undefined) {
    r = build(pattern);
    cache.set(pattern, r);
  }
  if (r instanceof RowError) throw r;
  return r;
}
