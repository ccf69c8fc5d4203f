import { describe, expect, test } from "bun:test";
import { goPow, roundDigits } from "../../lib/functions/math-go.ts";
import { call } from "./invoke-helpers.ts";
import { runFixture } from "./fixture-run.ts";

describe("math functions", () => {
  runFixture("math.json");

  test("rand is uniform in [0, 1)", () => {
    for (let i = 0; i < 100; i++) {
      const r = call("rand", []) as number;
      expect(r >= 0 && r < 1).toBe(true);
    }
  });

  test("mod by zero is NaN, returned as is", () => {
    expect(Number.isNaN(call("mod", [1n, 0n]) as number)).toBe(true);
  });

  test("infinite results are returned as is", () => {
    expect(call("exp", [1000n])).toBe(Infinity);
    expect(call("power", [0n, -1n])).toBe(Infinity);
    expect(call("ln", [0n])).toBe(-Infinity);
  });

  test("Go Pow special cases differ from JS", () => {
    expect(goPow(1, NaN)).toBe(1);
    expect(goPow(-1, Infinity)).toBe(1);
    expect(goPow(10, 23)).toBe(1e23);
  });

  test("round falls back to exact arithmetic when 10^d overflows", () => {
    expect(roundDigits(5e-310, 309n)).toBe(0);
    expect(roundDigits(1.5, 400n)).toBe(1.5);
    expect(roundDigits(1e-309, 309n)).toBe(1e-309);
  });
});
