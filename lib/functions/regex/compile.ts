/**
 * Go regular expressions on re2js (a JavaScript port of RE2/Go regexp): linear-time matching,
 * Go's syntax and Go's error texts; simple patterns proven fast on a backtracking engine also get
 * a JS RegExp twin (safe-js.ts), used where its speed is proven. A pattern is compiled once per
 * text and kept in a bounded LRU cache, because patterns may come from data.
 */
import type { RE2JS } from "re2js";
import { RowError } from "../../errors.ts";
import { JsCursor, type MatchCursor } from "./cursor.ts";
import { rewriteGoPattern, type GoRewrite } from "./go-syntax.ts";
import { Lru } from "./lru.ts";
import { safeJsOf, UNANCHORED_MAX } from "./safe-js.ts";

let re2jsModule: typeof import("re2js") | undefined;
/** re2js, loaded at the first pattern: its Unicode tables cost start-up time a rule without regexes should not pay. */
function re2js(): typeof import("re2js") {
  return (re2jsModule ??= require("re2js") as typeof import("re2js"));
}

/** A compiled Go regexp. Stateless between calls: safe to share between rules. */
export class GoRegex {
  readonly re: RE2JS;
  /** Capture names by group index ("" for the whole match and unnamed groups). */
  readonly names: readonly string[];
  /** The JS twin (flag `u`), null when the pattern is not proven fast on it. */
  readonly js: RegExp | null;
  /** The JS twin with flag `g`, for cursors (lastIndex is set before every search). */
  private readonly jsScan: RegExp | null;
  /** The twin is anchored by `^`: linear on any input, not only on short ones. */
  private readonly jsAnyLength: boolean;

  constructor(re: RE2JS, names: readonly string[], js: { source: string; anchored: boolean } | null) {
    this.re = re;
    this.names = names;
    this.js = js ? new RegExp(js.source, "u") : null;
    this.jsScan = js ? new RegExp(js.source, "gu") : null;
    this.jsAnyLength = js !== null && js.anchored;
  }

  private useJs(s: string): boolean {
    return this.js !== null && (this.jsAnyLength || s.length <= UNANCHORED_MAX);
  }

  /** Go `MatchString`: a match anywhere. */
  test(s: string): boolean {
    return this.useJs(s) ? this.js!.test(s) : this.re.test(s);
  }

  /** A search cursor over `s` (for FindString, submatches and ReplaceAllString). */
  cursor(s: string): MatchCursor {
    return this.useJs(s) ? new JsCursor(this.jsScan!, s) : this.re.matcher(s);
  }
}

/**
 * Entries kept by each cache of compiled patterns. Bounded also because each re2js pattern keeps
 * a lazily built DFA (re2js caps it at 8 MB per pattern).
 */
export const CACHE_LIMIT = 1024;

const cache = new Lru<GoRegex | RowError>(CACHE_LIMIT);

/** How many pattern texts the cache holds (at most CACHE_LIMIT). */
export function cachedPatterns(): number {
  return cache.size;
}

/** Go's `syntax.Error` text of an re2js parse failure, its fragment as the user wrote it. */
function goErrorText(e: InstanceType<typeof import("re2js").RE2JSSyntaxException>, pattern: string, rw: GoRewrite): string {
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

/**
 * Compiles without the cache; `twin: false` leaves the pattern on re2js alone (tests and the
 * benchmark compare the engines). Returns the RowError instead of throwing it.
 */
export function compileGoRegex(pattern: string, twin = true): GoRegex | RowError {
  const rw = rewriteGoPattern(pattern);
  let re: RE2JS;
  try {
    re = re2js().RE2JS.compile(rw.source);
  } catch (e) {
    if (e instanceof re2js().RE2JSSyntaxException) return new RowError(goErrorText(e, pattern, rw));
    return new RowError(`error parsing regexp: ${e instanceof Error ? e.message : String(e)}`);
  }
  let names = rw.names;
  if (names.length !== re.groupCount() + 1) {
    // The rewrite's group count is a bridge for duplicate names only; re2js's own count wins.
    const byIndex: string[] = new Array<string>(re.groupCount() + 1).fill("");
    for (const [name, idx] of Object.entries(re.namedGroups())) byIndex[idx] = name;
    names = byIndex;
  }
  return new GoRegex(re, names, twin ? safeJsOf(pattern) : null);
}

/** Compiles (cached) a Go pattern; throws RowError `error parsing regexp: <reason>: \`<fragment>\``. */
export function goRegex(pattern: string): GoRegex {
  let r = cache.get(pattern);
  if (r === undefined) {
    r = compileGoRegex(pattern);
    cache.set(pattern, r);
  }
  if (r instanceof RowError) throw r;
  return r;
}
