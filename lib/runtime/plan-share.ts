/**
 * One plan for the runs of rules with the same pure chain: the same SELECT and options over the
 * same stream definition, a chain of decoder / rate limit / preprocessor → WHERE → SELECT whose
 * expressions call no function and read no meta (sql/pure.ts). Such a plan is immutable data
 * and closures over nothing but its own compiled parts (no clock, rule id, call state, hit state),
 * so thousands of equal rules hold one copy of it; each run still builds its own operators (their
 * metrics, errors and scratch) from it (topology.ts).
 *
 * A plan is held weakly: it lives as long as a run uses it, and a changed rule or stream finds
 * another key or another definition object.
 */
import type { OpSpec, RulePlan } from "../plan/specs.ts";
import type { RuleOptions } from "../plan/rule-options.ts";
import type { StreamDef } from "../plan/streams.ts";
import type { SelectStatement } from "../sql/ast.ts";
import { isPureSelect } from "../sql/pure.ts";
import { text } from "./shared-eval.ts";

/** The plans in use, by the stream definition they read, then by their key. */
const plans = new WeakMap<StreamDef, Map<string, WeakRef<RulePlan>>>();

/** Forgets a key once its plan is collected (unless a newer plan took the key meanwhile). */
const collected = new FinalizationRegistry<{ byKey: Map<string, WeakRef<RulePlan>>; key: string }>(({ byKey, key }) => {
  if (byKey.get(key)?.deref() === undefined) byKey.delete(key);
});

/** The node kinds whose specs hold no state of a run. */
const PURE_OPS = new Set<OpSpec["kind"]>(["decoder", "ratelimit", "preprocessor", "filter", "project"]);

const pureOp = (o: OpSpec): boolean => PURE_OPS.has(o.kind) && !(o.kind === "filter" && o.hits !== undefined);

/**
 * `plan`, or the equal plan another run of the same chain already uses (then `plan` is dropped);
 * a plan of anything else than one source and a pure chain is its run's own.
 */
export function samePlan(plan: RulePlan, select: SelectStatement, options: RuleOptions, ignoreCase: boolean): RulePlan {
  const src = plan.sources.length === 1 ? plan.sources[0]! : undefined;
  if (src === undefined || select.joins.length > 0 || !src.helpers.every(pureOp) || !plan.ops.every(pureOp) || !isPureSelect(select)) return plan;
  let key: string;
  try {
    // The helpers say what the runtime decided for this run (a decoder, the rate limit's interval).
    key = text([ignoreCase, select, options, src.helpers.map((h) => (h.kind === "ratelimit" ? `${h.kind}:${h.interval}` : h.kind))]);
  } catch {
    // A definition JSON cannot hold (a cycle): the run keeps its own plan.
    return plan;
  }
  let byKey = plans.get(src.def);
  if (byKey === undefined) plans.set(src.def, (byKey = new Map()));
  const held = byKey.get(key)?.deref();
  if (held !== undefined) return held;
  byKey.set(key, new WeakRef(plan));
  collected.register(plan, { byKey, key });
  return plan;
}
