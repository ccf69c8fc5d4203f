import { describe, expect, test } from "bun:test";
import { RowError } from "../../../lib/errors.ts";
import {
  CACHE_LIMIT,
  cachedPatterns,
  callSiteRegex,
  compileGoRegex,
  compileLikePattern,
  GoRegex,
  goFindString,
  goFindStringSubmatch,
  goMatchString,
  goRegex,
  goReplaceAllString,
} from "../../../lib/functions/regex/index.ts";
import { Lru } from "../../../lib/functions/regex/lru.ts";
import type { Value } from "../../../lib/value/values.ts";
import { compileLikeSource } from "../../../lib/sql/like.ts";
import { ctxFor } from "../env.ts";
import { call } from "../invoke-helpers.ts";
import sqlCases from "../../../fixtures/functions/regex-sql.json";
import goCases from "../../../fixtures/functions/regex-go.json";
import go125Cases from "../../../fixtures/functions/regex-go125.json";
import likeCases from "../../../fixtures/functions/like.json";

interface RegexCase {
  name?: string;
  pattern: string;
  input?: string;
  template?: string;
  match?: boolean;
  find?: string;
  replace?: string;
  groups?: string[] | null;
  err?: string;
}

function errorOf(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    if (e instanceof RowError) return e.message;
    throw e;
  }
}

/**
 * Checks one case on both engines (the cached regexp, with its JS twin when the pattern has one,
 * and re2js alone); `groups` are FindStringSubmatch texts ("" for a group that did not take part).
 */
function check(c: RegexCase): void {
  if (c.err !== undefined) {
    expect(errorOf(() => goRegex(c.pattern))).toBe(c.err);
    return;
  }
  checkWith(goRegex(c.pattern), c);
  const alone = compileGoRegex(c.pattern, false);
  if (alone instanceof RowError) throw new Error(alone.message);
  checkWith(alone, c);
}

function checkWith(re: GoRegex, c: RegexCase): void {
  const s = c.input!;
  if (c.match !== undefined) expect(goMatchString(re, s)).toBe(c.match);
  if (c.find !== undefined) expect(goFindString(re, s)).toBe(c.find);
  if (c.replace !== undefined) expect(goReplaceAllString(re, s, c.template!)).toBe(c.replace);
  if (c.groups !== undefined) expect(goFindStringSubmatch(re, s)).toEqual(c.groups);
}

describe("Go regexp semantics (expected values computed by Go's regexp)", () => {
  test.each((goCases as RegexCase[]).map((c) => [c.pattern, c] as const))("%s", (_p, c) => check(c));
});

describe("Go 1.22–1.25 additions", () => {
  test.each((go125Cases as RegexCase[]).map((c) => [c.name!, c] as const))("%s", (_n, c) => check(c));
});

describe("LIKE patterns (sql §5.7)", () => {
  type LikeCase = { pattern: string; input?: string; want?: boolean; err?: string };
  test.each((likeCases as LikeCase[]).map((c) => [c.pattern, c] as const))("%s", (_p, c) => {
    if (c.err !== undefined) {
      expect(errorOf(() => compileLikePattern(c.pattern))).toBe(c.err);
      return;
    }
    expect(compileLikePattern(c.pattern).test(c.input!)).toBe(c.want!);
  });

  test("translation keeps \\% and \\_ and doubles backslashes", () => {
    expect(compileLikeSource("a\\%b%c_\\d")).toBe("^a\\\\%b.*c.\\\\d$");
  });
});

describe("compile cache", () => {
  test("the same pattern text yields the same compiled regexp", () => {
    expect(goRegex("a(b)c")).toBe(goRegex("a(b)c"));
    expect(compileLikePattern("a%")).toBe(compileLikePattern("a%"));
  });

  test("an invalid pattern fails with the same error every time", () => {
    const msg = "error parsing regexp: missing closing ): `(a`";
    expect(errorOf(() => goRegex("(a"))).toBe(msg);
    expect(errorOf(() => goRegex("(a"))).toBe(msg);
  });

  test("a compiled regexp is stateless", () => {
    const re = goRegex("a");
    expect(re.test("a")).toBe(true);
    expect(re.test("a")).toBe(true);
  });
});

describe("Go syntax and Go errors through the SQL functions", () => {
  type SqlCase = { fn: string; args: string[]; want?: Value; err?: string };
  test.each((sqlCases as SqlCase[]).map((c) => [`${c.fn}(${c.args.map((a) => JSON.stringify(a)).join(", ")})`, c] as const))("%s", (_l, c) => {
    const got = call(c.fn, c.args);
    expect(got).toEqual(c.err !== undefined ? { err: c.err } : c.want!);
  });
});

test("nesting deeper than Go's limit fails with Go's text, the whole pattern as fragment", () => {
  const deep = "(".repeat(1001) + "a" + ")".repeat(1001);
  expect(errorOf(() => goRegex(deep))).toBe(`error parsing regexp: expression nests too deeply: \`${deep}\``);
  expect(goRegex("(".repeat(999) + "a" + ")".repeat(999))).toBeInstanceOf(GoRegex);
});

describe("linear time (RE2): patterns that make a backtracking engine explode", () => {
  const s = "a".repeat(10_000) + "b";
  // CPU milliseconds of this process: the bound is about the algorithm, not the machine's load.
  const ms = (f: () => unknown): number => {
    const t0 = process.cpuUsage();
    f();
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / 1000;
  };

  test.each([
    ["regexp_matches", ["(a+)+$"], false],
    ["regexp_substr", ["(a+)+$"], ""],
    ["regexp_replace", ["(a+)+$", "x"], s],
    ["regexp_matches", ["(a|aa)+$"], false],
    ["regexp_matches", ["(a*)*c"], false],
    ["regexp_matches", ["(.*a){20}c"], false],
  ] as const)("%s(10,000 a's + b, %p) answers in < 50 ms", (fn, rest, want) => {
    call(fn, ["a".repeat(100) + "b", ...rest]); // compiled and warmed up outside the timing
    let got: unknown;
    expect(ms(() => (got = call(fn, [s, ...rest])))).toBeLessThan(50);
    expect(got).toEqual(want);
  });

  test("LIKE with many wildcards answers in < 50 ms", () => {
    const re = compileLikePattern("%a%a%a%a%a%a%a%a%a%a%c");
    expect(ms(() => expect(re.test(s)).toBe(false))).toBeLessThan(50);
  });

  test("a JSON path =~ filter answers in < 50 ms", () => {
    call("json_path_exists", [{ v: ["aab"] }, '$.v[? @ =~ "(a+)+$"]']);
    let got: unknown;
    expect(ms(() => (got = call("json_path_exists", [{ v: [s] }, '$.v[? @ =~ "(a+)+$"]'])))).toBeLessThan(50);
    expect(got).toBe(false);
  });
});

describe("compiled once", () => {
  test("a call site compiles a constant pattern on the first row only", () => {
    const ctx = ctxFor("regexp_matches");
    const a = callSiteRegex(ctx, "x(y)z");
    expect(callSiteRegex(ctx, "x(y)z")).toBe(a);
    const b = callSiteRegex(ctx, "other");
    expect(b).not.toBe(a);
    // The cache still holds the first: going back does not recompile.
    expect(callSiteRegex(ctx, "x(y)z")).toBe(a);
  });

  test("an invalid pattern at a call site fails on every row", () => {
    const ctx = ctxFor("regexp_matches");
    expect(() => callSiteRegex(ctx, "(a")).toThrow("error parsing regexp: missing closing ): `(a`");
    expect(() => callSiteRegex(ctx, "(a")).toThrow("error parsing regexp: missing closing ): `(a`");
  });

  test("the cache is a bounded LRU: the least recently used entry goes first", () => {
    const lru = new Lru<number>(3);
    lru.set("a", 1);
    lru.set("b", 2);
    lru.set("c", 3);
    expect(lru.get("a")).toBe(1);
    lru.set("d", 4);
    expect(lru.size).toBe(3);
    expect(lru.get("b")).toBeUndefined();
    expect([lru.get("a"), lru.get("c"), lru.get("d")]).toEqual([1, 3, 4]);
  });

  test("asking again for the key used last keeps the order of the others", () => {
    const lru = new Lru<number>(2);
    lru.set("a", 1);
    expect([lru.get("a"), lru.get("a")]).toEqual([1, 1]);
    lru.set("b", 2);
    expect([lru.get("b"), lru.get("b"), lru.get("a")]).toEqual([2, 2, 1]);
    lru.set("c", 3); // b is now the oldest
    expect([lru.get("b"), lru.get("a"), lru.get("c")]).toEqual([undefined, 1, 3]);
    const one = new Lru<number>(1);
    one.set("x", 1);
    one.set("y", 2);
    expect([one.get("x"), one.get("y"), one.size]).toEqual([undefined, 2, 1]);
  });

  test("patterns from data never grow the cache past its bound", () => {
    for (let i = 0; i < CACHE_LIMIT + 100; i++) goRegex(`p${i}`);
    expect(cachedPatterns()).toBe(CACHE_LIMIT);
    const latest = goRegex(`p${CACHE_LIMIT + 99}`);
    expect(latest).toBeInstanceOf(GoRegex);
    expect(goRegex(`p${CACHE_LIMIT + 99}`)).toBe(latest);
  });
});
