/** Runs a fixture table (fixture-cases.ts) as bun tests. */
import { expect, test } from "bun:test";
import { fmtV, formatFloatG, isObj, type Value } from "../../lib/value/values.ts";
import { argExpr, loadCases, sameValue } from "./fixture-cases.ts";
import { call, validate } from "./invoke-helpers.ts";

/** `%v` with kinds visible (`1` int, `1f` float), for readable failure diffs. */
function tagged(v: Value): string {
  if (typeof v === "number") return formatFloatG(v) + "f";
  if (Array.isArray(v)) return "[" + v.map(tagged).join(" ") + "]";
  if (isObj(v)) return "{" + Object.keys(v).sort().map((k) => `${k}:${tagged(v[k]!)}`).join(" ") + "}";
  return typeof v === "string" ? JSON.stringify(v) : fmtV(v);
}

export function runFixture(file: string): void {
  const { calls, validations } = loadCases(file);
  test.each(calls)("$fn($args)", (c) => {
    const got = call(c.fn, c.args);
    if (c.err !== undefined) {
      expect(got).toEqual({ err: c.err });
      return;
    }
    expect(got !== null && typeof got === "object" && "err" in got && !Array.isArray(got) ? got : null).toBeNull();
    const ok = sameValue(got as Value, c.want ?? null, c.approx);
    if (!ok) expect(tagged(got as Value)).toBe(tagged(c.want ?? null));
    expect(ok).toBe(true);
  });
  test.each(validations)("validate $fn($validate)", (c) => {
    expect(validate(c.fn, c.validate.map(argExpr)) ?? null).toBe(c.want);
  });
}
