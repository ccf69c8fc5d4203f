/** Waiting on a condition in tests, in place of a fixed sleep: poll it, fail with what was awaited. */

/**
 * Polls `cond` (sync or async) every `every` ms; fails with `what` after `ms` (a function is read at the
 * timeout, so the message can show the state reached); resolves to the time it took.
 */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string | (() => string), ms = 10_000, every = 5): Promise<number> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()} (${ms} ms)`);
    await Bun.sleep(every);
  }
  return Date.now() - t0;
}

/** Polls `probe` like `waitFor` until it returns something other than `undefined`, and resolves to that. */
export async function waitForValue<T>(probe: () => T | undefined | Promise<T | undefined>, what: string | (() => string), ms = 10_000, every = 5): Promise<T> {
  let v: T | undefined;
  await waitFor(async () => (v = await probe()) !== undefined, what, ms, every);
  return v as T;
}
