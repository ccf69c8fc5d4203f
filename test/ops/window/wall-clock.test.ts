import { expect, test } from "bun:test";
import { WallClock } from "../../../lib/ops/window/clock.ts";

test("a timer that throws reaches onError, and later timers still fire", async () => {
  const c = new WallClock();
  const errors: unknown[] = [];
  c.onError = (e) => void errors.push(e);
  const fired = new Promise<number>((resolve) => {
    c.schedule(c.now(), () => {
      throw new RangeError("Maximum call stack size exceeded.");
    });
    c.schedule(c.now() + 5, () => resolve(c.now()));
  });
  expect(await fired).toBeGreaterThan(0);
  c.stop();
  expect(errors.map((e) => (e as Error).message)).toEqual(["Maximum call stack size exceeded."]);
});
