/**
 * Window conditions (a sliding window's `OVER (WHEN …)`, state-window conditions) and the
 * `last_hit_count()` / `last_hit_time()` calls inside them (functions §2): read-only while the
 * condition is evaluated, advanced once each time it holds.
 */
import { RowError } from "../../errors.ts";
import type { Evaluator } from "../../expr/compile.ts";
import type { HitState } from "../../expr/hits.ts";
import type { EvalCtx, Tuple } from "../../expr/row.ts";

const NO_WINDOW: EvalCtx = { window: null };

/** True when `cond` is absent or yields boolean true; errors count as false (windows §4.3). */
export function triggers(cond: Evaluator | undefined, hits: HitState | undefined, t: Tuple): boolean {
  if (!cond) return true;
  let ok = false;
  try {
    ok = cond(t, NO_WINDOW) === true;
  } catch (e) {
    if (!(e instanceof RowError)) throw e;
  }
  if (ok) hits?.advance(t.ts);
  return ok;
}
