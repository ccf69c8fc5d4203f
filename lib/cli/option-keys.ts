/**
 * The rule option keys (rules-and-sinks.md §2, and floe's `windowEvaluator`/`sendNil`), so that a
 * misspelt `-o sendEror=true` is a usage error with a suggestion instead of an option nobody reads.
 * Only the command line is strict: REST keeps eKuiper's behaviour (unknown keys are ignored).
 */
import { UsageError } from "./options.ts";
import { didYouMean } from "../plan/suggest.ts";

export const RULE_OPTION_KEYS = [
  "isEventTime", "lateTolerance", "concurrency", "bufferLength", "sendMetaToSink", "sendNilField", "sendNil", "sendError", "qos",
  "checkpointInterval", "restartStrategy", "cron", "duration", "cronDatetimeRange", "planOptimizeStrategy", "notifySub",
  "disableBufferFullDiscard", "enableSaveStateBeforeStop", "forceExitTimeout", "debug", "logFilename", "experiment", "windowEvaluator",
];

/** The keys of the object options; an option absent here takes no sub-key. */
const NESTED: Record<string, string[]> = {
  restartStrategy: ["attempts", "delay", "multiplier", "maxDelay", "jitterFactor"],
  planOptimizeStrategy: ["enableIncrementalWindow", "enableAliasPushdown", "disableAliasRefCal", "optimizeControl", "windowOption"],
  experiment: ["useSliceTuple"],
};

/** Throws a UsageError for the first key of `-o` options that no rule reads (Go JSON: case-insensitive). */
export function checkOptionKeys(options: Readonly<Record<string, unknown>>): void {
  for (const [key, value] of Object.entries(options)) {
    const top = RULE_OPTION_KEYS.find((k) => k.toLowerCase() === key.toLowerCase());
    if (!top) throw new UsageError(`unknown rule option ${JSON.stringify(key)}${didYouMean(key, RULE_OPTION_KEYS) || " (docs/cli.md lists the rule options)"}`);
    const subs = NESTED[top];
    if (!subs || value === null || typeof value !== "object" || Array.isArray(value)) continue;
    for (const sub of Object.keys(value))
      if (!subs.some((k) => k.toLowerCase() === sub.toLowerCase()))
        throw new UsageError(`unknown rule option "${key}.${sub}"${didYouMean(sub, subs, `${top}.`) || ` (${top} takes ${subs.join(", ")})`}`);
  }
}
