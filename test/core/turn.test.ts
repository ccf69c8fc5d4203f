import { expect, test } from "bun:test";
import { Turn, WHOLE } from "../../lib/core/turn.ts";

test("an unbounded turn never ends and ignores caps", () => {
  expect(WHOLE.unbounded).toBe(true);
  expect(WHOLE.spent()).toBe(false);
  expect(WHOLE.more(64, 64, 1)).toBe(true);
  expect(WHOLE.over(1_000_000, 1)).toBe(false);
  expect(new Turn(undefined).unbounded).toBe(true);
});

test("a turn whose time is up ends at the next look at the clock, not between looks", () => {
  const t = new Turn(-1); // its deadline already passed
  expect(t.unbounded).toBe(false);
  expect(t.spent()).toBe(true);
  expect(t.more(1, 32)).toBe(true); // not a multiple of 32: no look
  expect(t.more(31, 32)).toBe(true);
  expect(t.more(32, 32)).toBe(false);
  expect(t.more(64, 64)).toBe(false);
  expect(t.over(1, 100)).toBe(true);
});

test("a turn with time left ends at its cap of units", () => {
  const t = new Turn(3_600_000);
  expect(t.spent()).toBe(false);
  expect(t.more(32, 32)).toBe(true);
  expect(t.more(255, 32, 256)).toBe(true);
  expect(t.more(256, 32, 256)).toBe(false);
  expect(t.over(1023, 1024)).toBe(false);
  expect(t.over(1024, 1024)).toBe(true);
});

test("the clock is looked at only every `every` units", () => {
  const real = performance.now;
  let looks = 0;
  performance.now = () => {
    looks++;
    return real.call(performance);
  };
  try {
    const t = new Turn(3_600_000);
    looks = 0;
    for (let done = 1; done <= 640; done++) t.more(done, 64);
    expect(looks).toBe(10);
    looks = 0;
    for (let done = 1; done <= 640; done++) WHOLE.more(done, 64);
    expect(looks).toBe(0);
  } finally {
    performance.now = real;
  }
});
