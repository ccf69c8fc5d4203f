import { describe, expect, test } from "bun:test";
import { invoke, lookupBuiltin } from "../../lib/functions/index.ts";
import { RowError } from "../../lib/errors.ts";
import { ctxFor } from "./env.ts";
import { decodeArgExpr, decodeValue } from "./tagged-values.ts";
import cases from "../../fixtures/functions/string.json";
import validateCases from "../../fixtures/functions/string-validate.json";

interface Case {
  fn: string;
  args: unknown[];
  want?: unknown;
  err?: string;
}

function label(c: { fn: string; args: unknown[] }): string {
  return `${c.fn}(${c.args.map((a) => JSON.stringify(a)).join(", ")})`;
}

describe("string functions", () => {
  test.each((cases as Case[]).map((c) => [label(c), c] as const))("%s", (_l, c) => {
    const def = lookupBuiltin(c.fn)!;
    const run = () => invoke(def, c.args.map(decodeValue), ctxFor(c.fn));
    if (c.err !== undefined) {
      expect(run).toThrow(RowError);
      try {
        run();
      } catch (e) {
        expect((e as RowError).message).toBe(c.err);
      }
      return;
    }
    expect(run()).toEqual(decodeValue(c.want));
  });
});

describe("string function validators", () => {
  interface VCase {
    fn: string;
    args: Record<string, unknown>[];
    err: string | null;
  }
  test.each((validateCases as VCase[]).map((c) => [label(c), c] as const))("%s", (_l, c) => {
    const msg = lookupBuiltin(c.fn)!.validate!(c.args.map(decodeArgExpr));
    expect(msg ?? null).toBe(c.err);
  });
});

describe("case mapping per code point (functions §8.1)", () => {
  test("lower and upper keep every code point one code point", () => {
    const lower = lookupBuiltin("lower")!;
    const upper = lookupBuiltin("upper")!;
    for (let cp = 0x80; cp < 0x3000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      for (const def of [lower, upper]) {
        const out = invoke(def, [ch], ctxFor(def.name)) as string;
        expect([...out].length).toBe(1);
      }
    }
  });
});
