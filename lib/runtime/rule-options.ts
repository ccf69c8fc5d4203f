/**
 * Rule options (rules-and-sinks.md §1.1, §2): kuiper.yaml `rule:` defaults for the inherited keys,
 * the rule's own object decoded on top, validation joined into
 * `Rule <id> has invalid options: <errors>.` Also floe's bus policy: back-pressure unless the rule
 * says `"disableBufferFullDiscard": false` explicitly (eKuiper's drop-oldest, opted into).
 */
import { EngineError, ErrCode, RowError } from "../errors.ts";
import { parseGoDuration } from "../expr/duration.ts";
import type { OverflowPolicy } from "./bus.ts";
import { DEFAULT_SUBSCRIBER_CAPACITY } from "./bus.ts";

export interface RuleOptions {
  readonly isEventTime: boolean;
  /** ms */
  readonly lateTolerance: number;
  readonly concurrency: number;
  readonly bufferLength: number;
  readonly sendMetaToSink: boolean;
  readonly sendNilField: boolean;
  readonly sendError: boolean;
  readonly qos: number;
  /** ms */
  readonly checkpointInterval: number;
  readonly restartAttempts: number;
  readonly cron: string;
  readonly duration: string;
  readonly disableBufferFullDiscard: boolean;
  readonly incrementalWindow: boolean;
  readonly windowEvaluator: "buffered" | "auto";
  /** Capacity of each of the rule's bus subscriptions (floe default 4,096; `bufferLength` when set). */
  readonly subscriberCapacity: number;
  /** What a full subscription does: back-pressure (default) or eKuiper's drop-oldest (opt-in). */
  readonly overflow: OverflowPolicy;
  /** The raw merged options object (for options floe does not interpret). */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** Inherited from kuiper.yaml `rule:` (§1.1); everything else defaults to its zero value. */
const INHERITED = ["isEventTime", "lateTolerance", "concurrency", "bufferLength", "sendMetaToSink", "sendError", "qos", "checkpointInterval", "restartStrategy"];
const BUILTIN: Record<string, unknown> = {
  isEventTime: false,
  lateTolerance: 1000,
  concurrency: 1,
  bufferLength: 1024,
  sendMetaToSink: false,
  sendError: false,
  qos: 0,
  checkpointInterval: 300_000,
  restartStrategy: { attempts: 0 },
};

function lookup(o: Record<string, unknown>, key: string): unknown {
  if (key in o) return o[key];
  const lk = key.toLowerCase();
  for (const [k, v] of Object.entries(o)) if (k.toLowerCase() === lk) return v;
  return undefined;
}

function durationMs(v: unknown, name: string): number {
  if (typeof v === "number") {
    if (!Number.isInteger(v)) throw new EngineError(`duration ${v} is not an integer`, ErrCode.rule);
    return v;
  }
  if (typeof v === "string") {
    try {
      return Number(parseGoDuration(v) / 1_000_000n);
    } catch (e) {
      throw new EngineError(e instanceof RowError ? e.message : String(e), ErrCode.rule);
    }
  }
  throw new EngineError(`invalid ${name} ${JSON.stringify(v)}`, ErrCode.rule);
}

function bool(v: unknown, name: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === "boolean") return v;
  throw new EngineError(`1 error(s) decoding:\n\n* '${name}' expected type 'bool', got unconvertible type '${typeof v === "string" ? "string" : "float64"}', value: '${String(v)}'`, ErrCode.rule);
}

function int(v: unknown, name: string, def: number): number {
  if (v === undefined || v === null) return def;
  if (typeof v === "number") return Math.trunc(v);
  throw new EngineError(`1 error(s) decoding:\n\n* '${name}' expected type 'int', got unconvertible type 'string', value: '${String(v)}'`, ErrCode.rule);
}

/**
 * Merges and validates the options of rule `id`. `defaults` is the kuiper.yaml `rule:` section
 * (keys as in rule JSON); `raw` the rule's `options` value (null/undefined = defaults only).
 */
export function parseRuleOptions(id: string, raw: unknown, defaults: Readonly<Record<string, unknown>> = {}): RuleOptions {
  const merged: Record<string, unknown> = {};
  for (const k of INHERITED) merged[k] = lookup(defaults, k) ?? BUILTIN[k];
  const own = raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const explicit = new Set(Object.keys(own).map((k) => k.toLowerCase()));
  for (const [k, v] of Object.entries(own)) {
    const canon = INHERITED.find((x) => x.toLowerCase() === k.toLowerCase()) ?? k;
    merged[canon] = v;
  }
  const errs: string[] = [];
  const concurrency = int(merged.concurrency, "concurrency", 1);
  if (concurrency < 0) errs.push("invalidConcurrency:concurrency must be greater than 0");
  const bufferLength = int(merged.bufferLength, "bufferLength", 1024);
  if (bufferLength < 0) errs.push("invalidBufferLength:bufferLength must be greater than 0");
  const lateTolerance = durationMs(merged.lateTolerance ?? 1000, "lateTolerance");
  if (lateTolerance < 0) errs.push("invalidLateTol:lateTol must be greater than 0");
  const rs = merged.restartStrategy;
  const attempts = rs && typeof rs === "object" ? int((rs as Record<string, unknown>).attempts, "attempts", 0) : 0;
  if (attempts < 0) errs.push("invalidRestartAttempts:restart attempts must be greater than 0");
  if (errs.length) throw new EngineError(`Rule ${id} has invalid options: ${errs.join("\n")}.`, ErrCode.rule);
  const dbfd = lookup(own, "disableBufferFullDiscard");
  const strategy = lookup(own, "planOptimizeStrategy") as { enableIncrementalWindow?: unknown } | undefined;
  const duration = lookup(own, "duration");
  if (duration !== undefined && duration !== null && typeof duration !== "string")
    throw new EngineError(`1 error(s) decoding:\n\n* 'duration' expected type 'string', got unconvertible type 'float64', value: '${String(duration)}'`, ErrCode.rule);
  return {
    isEventTime: bool(merged.isEventTime, "isEventTime"),
    lateTolerance,
    concurrency,
    bufferLength,
    sendMetaToSink: bool(merged.sendMetaToSink, "sendMetaToSink"),
    sendNilField: bool(lookup(own, "sendNilField") ?? lookup(own, "sendNil"), "sendNilField"),
    sendError: bool(merged.sendError, "sendError"),
    qos: int(merged.qos, "qos", 0),
    checkpointInterval: durationMs(merged.checkpointInterval ?? 300_000, "checkpointInterval"),
    restartAttempts: attempts,
    cron: typeof lookup(own, "cron") === "string" ? (lookup(own, "cron") as string) : "",
    duration: typeof duration === "string" ? duration : "",
    disableBufferFullDiscard: bool(dbfd, "disableBufferFullDiscard"),
    incrementalWindow: strategy?.enableIncrementalWindow === true,
    windowEvaluator: lookup(own, "windowEvaluator") === "buffered" ? "buffered" : "auto",
    subscriberCapacity: explicit.has("bufferlength") && bufferLength > 0 ? bufferLength : DEFAULT_SUBSCRIBER_CAPACITY,
    // floe pushes back by default; eKuiper's drop-oldest only when the rule asks for it explicitly.
    overflow: dbfd === false ? "drop-oldest" : "block",
    raw: merged,
  };
}
