/** A fixed function environment for unit tests: virtual clock at the conformance epoch, UTC. */
import { UTC } from "../../lib/value/time.ts";
import type { CallCtx, FuncEnv } from "../../lib/functions/registry.ts";

export const testEnv: FuncEnv = {
  now: () => 1541152480000,
  zone: UTC,
  ruleId: "rule1",
  ruleStart: 1541152480000,
};

export function ctxFor(name: string, env: FuncEnv = testEnv): CallCtx {
  return { name, env, state: undefined };
}
