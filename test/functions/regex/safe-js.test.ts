/**
 * The JS RegExp twin of simple Go patterns (lib/functions/regex/safe-js.ts): which patterns get
 * one, that it answers exactly as re2js does, and that its speed stays bounded.
 */
import { describe, expect, test } from "bun:test";
import { RowError } from "../../../lib/errors.ts";
import {
  compileGoRegex,
  goFindString,
  goFindStringSubmatch,
  goMatchString,
  goReplaceAllString,
  type GoRegex,
} from "../../../lib/functions/regex/index.ts";
import { safeJsOf } from "../../../lib/functions/regex/safe-js.ts";

function compiled(p: string, twin: boolean): GoRegex {
  const r = compileGoRegex(p, twin);
  if (r instanceof RowError) throw new Error(`${p}: ${r.message}`);
  return r;
}

describe("which patterns get a JS twin", () => {
  test.each([
    ["dev_[0-9]+", true],
    ["^bench/esphome/([^/]+)/sensor/(\\w+)/state$", true],
    ["^abc.*$", true],
    ["(?P<first>\\w+) (?P<last>\\w+)", true],
    ["[0-9]+x", true],
    ["a{2,3}b", true],
    ["(a+)+$", false],
    ["(a|aa)+$", false],
    ["a*a", false],
    ["\\d+\\w", false],
    ["^bench/.*/state$", true],
    ["^a[0-9]+-.*x{2}$", true],
    ["^a.*b.*c$", false],
    ["^a.*b+$", false],
    ["a.*b", false],
    ["^.*abc.*$", false],
    ["a+b?c", false],
    ["a+?b", false],
    ["(?i)abc", false],
    ["a|b", false],
    ["\\s+", false],
    ["\\bword", false],
    ["\\pL+", false],
    ["[[:alpha:]]+", false],
    ["a\\z", false],
    ["(ab)+", false],
  ] as const)("%s → %p", (p, want) => {
    expect(safeJsOf(p) !== null).toBe(want);
    expect(compiled(p, true).js !== null).toBe(want);
  });
});

describe("the twin answers as re2js does", () => {
  // A fixed-seed generator of patterns from the twin's subset (and a few outside it) and inputs.
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;
  const ATOMS = ["a", "b", "-", "/", ".", "\\d", "\\w", "\\W", "[ab]", "[^a]", "[a-c]", "[\\d/]", "é", "😀", "\\.", "\\$"];
  const QUANT = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,}"];
  function pattern(): string {
    let p = rand(4) === 0 ? "^" : "";
    const n = 1 + rand(5);
    let open = false;
    for (let i = 0; i < n; i++) {
      if (!open && rand(5) === 0) {
        p += pick(["(", "(?:", "(?P<g" + i + ">"]);
        open = true;
      }
      p += pick(ATOMS) + pick(QUANT);
      if (open && rand(3) === 0) {
        p += ")";
        open = false;
      }
    }
    if (open) p += ")";
    if (rand(4) === 0) p += "$";
    return p;
  }
  const CHARS = ["a", "a", "b", "c", "-", "/", "1", "2", "é", "😀", "\n", ".", "$", " "];
  const input = () => Array.from({ length: rand(12) }, () => pick(CHARS)).join("");

  test("2,000 generated patterns × 5 inputs: match, find, submatches and replace agree", () => {
    let twins = 0;
    for (let k = 0; k < 2000; k++) {
      const p = pattern();
      const withTwin = compiled(p, true);
      const alone = compiled(p, false);
      if (withTwin.js === null) continue;
      twins++;
      for (let j = 0; j < 5; j++) {
        const s = input();
        const at = `${JSON.stringify(p)} on ${JSON.stringify(s)}`;
        expect([at, goMatchString(withTwin, s)]).toEqual([at, goMatchString(alone, s)]);
        expect([at, goFindString(withTwin, s)]).toEqual([at, goFindString(alone, s)]);
        expect([at, goFindStringSubmatch(withTwin, s)]).toEqual([at, goFindStringSubmatch(alone, s)]);
        expect([at, goReplaceAllString(withTwin, s, "<$0|$1>")]).toEqual([at, goReplaceAllString(alone, s, "<$0|$1>")]);
      }
    }
    // The generator reaches the twin often enough for this to mean something.
    expect(twins).toBeGreaterThan(500);
  });
});

describe("the twin's speed is bounded", () => {
  // CPU milliseconds of this process: the bound is about the algorithm, not the machine's load.
  const ms = (f: () => unknown): number => {
    const t0 = process.cpuUsage();
    f();
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / 1000;
  };

  test("an unanchored twin is quadratic at worst, so long inputs go to re2js", () => {
    const re = compiled("[0-9]+x", true);
    expect(re.js).not.toBeNull();
    const s = "1".repeat(200_000);
    expect(ms(() => expect(goMatchString(re, s)).toBe(false))).toBeLessThan(50);
    expect(ms(() => expect(goReplaceAllString(re, s, "-")).toBe(s))).toBeLessThan(50);
  });

  test("an anchored twin is linear on any input", () => {
    const re = compiled("^[0-9]+x", true);
    const s = "1".repeat(1_000_000);
    expect(ms(() => expect(goMatchString(re, s)).toBe(false))).toBeLessThan(50);
  });

  test("an anchored twin with one overlapping repeat (LIKE prefix%suffix) is linear", () => {
    const re = compiled("^a.*/state$", true);
    expect(re.js).not.toBeNull();
    const s = "a" + "/stat".repeat(20_000);
    expect(ms(() => expect(goMatchString(re, s)).toBe(false))).toBeLessThan(50);
  });
});
