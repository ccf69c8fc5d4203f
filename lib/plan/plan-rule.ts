/**
 * The one planner set-up every caller uses (the rule run, pipe mode, the daemon's explain, `floe
 * check`): a rule's SELECT and options, the streams it reads, and what the engine supplies — its
 * functions, zone and clock.
 */
import type { FuncEnv, FunctionRegistry } from "../functions/registry.ts";
import type { SelectStatement } from "../sql/ast.ts";
import type { Zone } from "../value/time.ts";
import { planSelect, type PlanOptions, type PlannedRule } from "./plan.ts";
import { planOptions, type RuleOptions } from "./rule-options.ts";
import type { StreamDef } from "./streams.ts";

/**
 * The shapes of a rule, one name each, from the text a user writes to what the planner reads:
 * - `RuleFile` (sql/parse.ts): a pipe-mode `.sql` rule file, CREATE statements then one SELECT.
 * - `StoredRule` (store/stored-rule.ts): a rule JSON as the REST API and the store take it, decoded
 *   and validated with its options merged, and its JSON text as stored.
 * - `RuleJson` (runtime/rule.ts): the parts of a rule JSON the runtime reads (`Rule.create`).
 * - `RuleToPlan` (below): what the planner reads of a rule, its id, SELECT and options.
 */
export interface RuleToPlan {
  readonly id: string;
  readonly select: SelectStatement;
  readonly options: RuleOptions;
}

export interface PlanContext {
  readonly functions: FunctionRegistry;
  readonly zone: Zone;
  /** What function calls see (engine clock, rule start); default: the wall clock, started now. */
  readonly env?: FuncEnv;
  /** `basic.ignoreCase` (sql §6.3). */
  readonly ignoreCase?: boolean;
  /** Streams whose source yields bytes get a decoder node (set by the rule run). */
  readonly decoder?: PlanOptions["decoder"];
  /** Push sources with an `interval` get a rate-limit node (set by the rule run). */
  readonly rateLimit?: PlanOptions["rateLimit"];
}

export function planRule(def: RuleToPlan, streams: ReadonlyMap<string, StreamDef>, ctx: PlanContext): PlannedRule {
  const env = ctx.env ?? { now: () => Date.now(), zone: ctx.zone, ruleId: def.id, ruleStart: Date.now() };
  return planSelect(def.select, streams, {
    env,
    functions: ctx.functions,
    zone: ctx.zone,
    ignoreCase: ctx.ignoreCase,
    ...planOptions(def.options),
    ...(ctx.decoder ? { decoder: ctx.decoder } : {}),
    ...(ctx.rateLimit ? { rateLimit: ctx.rateLimit } : {}),
  });
}

/**
 * The columns a rule reads from `stream` as the planner prunes them: undefined when the rule does
 * not read it, null when it needs every column (a wildcard). Plans the rule (throws its error).
 */
export function streamColumns(def: RuleToPlan, stream: string, streams: ReadonlyMap<string, StreamDef>, ctx: PlanContext): ReadonlySet<string> | null | undefined {
  let cols: Set<string> | null | undefined;
  for (const s of planRule(def, streams, ctx).plan.sources) {
    if (s.name !== stream || cols === null) continue;
    if (s.columns === null) cols = null;
    else cols = new Set([...(cols ?? []), ...s.columns]);
  }
  return cols;
}
