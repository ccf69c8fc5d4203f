import { describe, expect, test } from "bun:test";
import { RowError } from "../../lib/errors.ts";
import {
  compileLikePattern,
  goFindString,
  goFindStringSubmatch,
  goMatchString,
  goRegex,
  goReplaceAllString,
} from "../../lib/functions/regex/index.ts";
import { compileLikeSource } from "../../lib/sql/like.ts";
import goCases from "../../fixtures/functions/regex-go.json";
import go125Cases from "../../fixtures/functions/regex-go125.json";
import likeCases from "../../fixtures/functions/like.json";

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

/** Checks one case; `groups` are FindStringSubmatch texts ("" for a group that did not take part). */
function check(c: RegexCase): void {
  if (c.err !== undefined) {
    expect(errorOf(() => goRegex(c.pattern))).toBe(c.err);
    return;
  }
  const re = goRegex(c.pattern);
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
