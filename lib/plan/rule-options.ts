/**
 * Rule options (rules-and-sinks.md §1.1, §2), the one parser the daemon, the rule runtime and pipe
 * mode share: kuiper.yaml `rule:` defaults for the inherited keys, the rule's own object decoded on
 * top with Go's `json.Unmarshal` texts, then validation joined into
 * `Rule <id> has invalid options: <errors>.` Also floe's bus policy: back-pressure unless the rule
 * says `"disableBufferFullDiscard": false` explicitly (eKuiper's drop-oldest, opted into).
 */
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { goDurationMs } from "../value/duration.ts";
import { assignField, field, isObject, jsonKind } from "../value/go-json.ts";
import type { PlanOptions } from "./plan.ts";
import { DEFAULT_SUBSCRIBER_CAPACITY, type OverflowPolicy } from "../core/bus.ts";

export interface DatetimeRange {
  readonly begin: string;
  readonly end: string;
  readonly beginTimestamp: number;
  readonly endTimestamp: number;
}

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
  /** With qos ≥ 1, take a final checkpoint at stop (§5). */
  readonly enableSaveStateBeforeStop: boolean;
  readonly restartStrategy: { readonly attempts: number };
  readonly cron: string;
  /** The Go duration text ("" = none). */
  readonly duration: string;
  /** `duration` in ms (0 when none). */
  readonly durationMs: number;
  readonly cronDatetimeRange: readonly DatetimeRange[];
  readonly disableBufferFullDiscard: boolean;
  /** `planOptimizeStrategy.enableIncrementalWindow`. */
  readonly incrementalWindow: boolean;
  /** floe's `windowEvaluator` option: "buffered" turns off incremental evaluation (plan-window.ts). */
  readonly windowEvaluator: "buffered" | "auto";
  /** `experiment.useSliceTuple`: eKuiper's slice rows (indexed fields in schemas; graph rules refuse it). */
  readonly useSliceTuple: boolean;
  /** Capacity of each of the rule's bus subscriptions (floe default 4,096; `bufferLength` when set). */
  readonly subscriberCapacity: number;
  /** What a full subscription does: back-pressure (default) or eKuiper's drop-oldest (opt-in). */
  readonly overflow: OverflowPolicy;
  /**
   * floe: the cap on the rows a rule's buffered windows hold together (ops/window/held-rows.ts),
   * `windowMaxRows` (default 1,000,000) and `windowMaxBytes` (estimated, default 256 MiB); ≤ 0 is no cap.
   */
  readonly windowMaxRows: number;
  readonly windowMaxBytes: number;
  /** The merged options as JSON, the rule's keys spelled as given (export, options floe does not read). */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** Inherited from kuiper.yaml `rule:` (§1.1); every other option starts at its zero value. */
const INHERITED = ["isEventTime", "lateTolerance", "concurrency", "bufferLength", "sendMetaToSink", "sendError", "qos", "checkpointInterval", "restartStrategy", "windowMaxRows", "windowMaxBytes"];

/** Defaults of `windowMaxRows` and `windowMaxBytes` (docs/memory-budgets.md). */
export const WINDOW_MAX_ROWS = 1_000_000;
export const WINDOW_MAX_BYTES = 256 * 1024 * 1024;

const DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

const fail = (message: string) => new EngineError(message, ErrCode.undefined);

/** The yaml defaults, then the rule's own keys (a key replaces its case-insensitive twin). */
function merge(given: unknown, defaults: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const k of INHERITED) {
    const v = field(defaults, k);
    if (v !== undefined) o[k] = v;
  }
  if (given === undefined || given === null) return o;
  if (!isObject(given)) throw fail(`json: cannot unmarshal ${jsonKind(given)} into Go struct field Rule.options of type def.RuleOption`);
  for (const [k, v] of Object.entries(given)) assignField(o, k, v);
  return o;
}

/** Reads typed options off the merged object, keeping Go's decode errors in order. */
class Decoder {
  readonly errors: string[] = [];
  constructor(private readonly o: Record<string, unknown>) {}

  private get(key: string, want: string, goType: string): unknown {
    const v = field(this.o, key);
    if (v === undefined || v === null) return undefined;
    if (typeof v === want) return v;
    this.errors.push(`json: cannot unmarshal ${jsonKind(v)} into Go struct field RuleOption.options.${key} of type ${goType}`);
    return undefined;
  }

  int(key: string, dflt: number): number {
    const v = this.get(key, "number", "int") as number | undefined;
    return v === undefined ? dflt : Math.trunc(v);
  }

  bool(key: string): boolean {
    return (this.get(key, "boolean", "bool") as boolean | undefined) ?? false;
  }

  str(key: string): string {
    return (this.get(key, "string", "string") as string | undefined) ?? "";
  }

  /** eKuiper's `DurationConf`: integral ms as a number, or a Go duration string. Whole ms. */
  duration(key: string, dflt: number): number {
    const v = field(this.o, key);
    if (v === undefined || v === null) return dflt;
    if (typeof v === "number") {
      if (Number.isInteger(v)) return v;
      this.errors.push(`duration ${v} is not an integer`);
    } else if (typeof v === "string") {
      try {
        // Negative sub-ms values stay negative, so validation sees them as Go does.
        const ms = goDurationMs(v);
        return ms < 0 ? Math.floor(ms) : Math.trunc(ms);
      } catch (e) {
        this.errors.push(errorText(e));
      }
    } else this.errors.push(`${key}: invalid duration`);
    return dflt;
  }
}

function datetimeRanges(v: unknown): DatetimeRange[] {
  if (!Array.isArray(v)) return [];
  return v.map((r) => {
    const x = isObject(r) ? r : {};
    const begin = field(x, "begin");
    const end = field(x, "end");
    const beginTimestamp = field(x, "beginTimestamp");
    const endTimestamp = field(x, "endTimestamp");
    return {
      begin: typeof begin === "string" ? begin : "",
      end: typeof end === "string" ? end : "",
      beginTimestamp: typeof beginTimestamp === "number" ? beginTimestamp : 0,
      endTimestamp: typeof endTimestamp === "number" ? endTimestamp : 0,
    };
  });
}

function rangeError(r: DatetimeRange): string | undefined {
  const after = "validate cronDatetimeRange failed, err:begin time shouldn't after end time";
  if (r.beginTimestamp > 0 && r.endTimestamp > 0) return r.beginTimestamp > r.endTimestamp ? after : undefined;
  for (const t of [r.begin, r.end])
    if (!DATETIME.test(t)) return `validate cronDatetimeRange failed, err:parsing time ${JSON.stringify(t)} as "2006-01-02 15:04:05": cannot parse ${JSON.stringify(t)} as "2006"`;
  return r.begin > r.end ? after : undefined;
}

/**
 * Merges the options of rule `id` (`given`: its `options` value, null/undefined = defaults only)
 * over `defaults` (kuiper.yaml `rule:`, keys as in rule JSON) and validates them. Throws code 1000:
 * the first Go decode error as is, else `Rule <id> has invalid options: …`.
 */
export function parseRuleOptions(id: string, given: unknown, defaults: Readonly<Record<string, unknown>> = NO_DEFAULTS): RuleOptions {
  // Many rules give the same options (most give none): they share one parsed object, read-only.
  let key: string | undefined;
  try {
    key = JSON.stringify(given ?? null);
  } catch {
    key = undefined;
  }
  let seen = key === undefined ? undefined : parsedOptions.get(defaults);
  const hit = key === undefined ? undefined : seen?.get(key);
  if (hit !== undefined) return hit;
  const parsed = parseOptions(id, given, defaults);
  if (key !== undefined && key.length <= MAX_SHARED_OPTIONS) {
    if (seen === undefined) parsedOptions.set(defaults, (seen = new Map()));
    // A bounded set: options that differ rule by rule start it over.
    if (seen.size >= SHARED_OPTIONS) seen.clear();
    seen.set(key, Object.freeze(parsed));
  }
  return parsed;
}

const NO_DEFAULTS: Readonly<Record<string, unknown>> = Object.freeze({});
/** Parsed options by the defaults they were parsed with and the JSON of what was given. */
const parsedOptions = new WeakMap<object, Map<string, RuleOptions>>();
const SHARED_OPTIONS = 256;
/** Options JSON longer than this is parsed for its rule alone. */
const MAX_SHARED_OPTIONS = 4096;

function parseOptions(id: string, given: unknown, defaults: Readonly<Record<string, unknown>>): RuleOptions {
  const o = merge(given, defaults);
  const d = new Decoder(o);
  const concurrency = d.int("concurrency", 1);
  const bufferLength = d.int("bufferLength", 1024);
  const lateTolerance = d.duration("lateTolerance", 1000);
  const checkpointInterval = d.duration("checkpointInterval", 300_000);
  const duration = d.str("duration");
  const isEventTime = d.bool("isEventTime");
  const sendMetaToSink = d.bool("sendMetaToSink");
  // sql.md §18 calls it `sendNil`; eKuiper's JSON key is `sendNilField`. Both are read.
  const sendNilField = d.bool("sendNilField");
  const sendNil = d.bool("sendNil");
  const sendError = d.bool("sendError");
  const qos = d.int("qos", 0);
  const cron = d.str("cron");
  const disableBufferFullDiscard = d.bool("disableBufferFullDiscard");
  const enableSaveStateBeforeStop = d.bool("enableSaveStateBeforeStop");
  const windowMaxRows = d.int("windowMaxRows", WINDOW_MAX_ROWS);
  const windowMaxBytes = d.int("windowMaxBytes", WINDOW_MAX_BYTES);
  if (d.errors.length) throw fail(d.errors[0]!);

  const rs = field(o, "restartStrategy");
  const attemptsV = isObject(rs) ? field(rs, "attempts") : undefined;
  const attempts = typeof attemptsV === "number" ? Math.trunc(attemptsV) : 0;
  const cronDatetimeRange = datetimeRanges(field(o, "cronDatetimeRange"));
  const errs: string[] = [];
  if (concurrency < 0) errs.push("invalidConcurrency:concurrency must be greater than 0");
  if (bufferLength < 0) errs.push("invalidBufferLength:bufferLength must be greater than 0");
  if (lateTolerance < 0) errs.push("invalidLateTol:lateTol must be greater than 0");
  if (attempts < 0) errs.push("invalidRestartAttempts:restart attempts must be greater than 0");
  for (const r of cronDatetimeRange) {
    const e = rangeError(r);
    if (e) errs.push(e);
  }
  let durationMs = 0;
  if (duration) {
    try {
      durationMs = goDurationMs(duration);
    } catch (e) {
      errs.push(errorText(e));
    }
  }
  if (errs.length) throw fail(`Rule ${id} has invalid options: ${errs.join("\n")}.`);

  const strategy = field(o, "planOptimizeStrategy");
  const experiment = field(o, "experiment");
  const explicitBuffer = isObject(given) && field(given, "bufferLength") !== undefined;
  return {
    isEventTime,
    lateTolerance,
    concurrency,
    bufferLength,
    sendMetaToSink,
    sendNilField: sendNilField || sendNil,
    sendError,
    qos,
    checkpointInterval,
    enableSaveStateBeforeStop,
    restartStrategy: { attempts },
    cron,
    duration,
    durationMs,
    cronDatetimeRange,
    disableBufferFullDiscard,
    incrementalWindow: isObject(strategy) && field(strategy, "enableIncrementalWindow") === true,
    windowEvaluator: field(o, "windowEvaluator") === "buffered" ? "buffered" : "auto",
    useSliceTuple: isObject(experiment) && field(experiment, "useSliceTuple") === true,
    subscriberCapacity: explicitBuffer && bufferLength > 0 ? bufferLength : DEFAULT_SUBSCRIBER_CAPACITY,
    // floe pushes back by default; eKuiper's drop-oldest only when the rule asks for it explicitly.
    overflow: field(o, "disableBufferFullDiscard") === false ? "drop-oldest" : "block",
    windowMaxRows,
    windowMaxBytes,
    raw: o,
  };
}

/** The options that shape the plan (plan.ts `PlanOptions`). */
export function planOptions(o: RuleOptions): Pick<PlanOptions, "sendMetaToSink" | "sendNil" | "isEventTime" | "lateTolerance" | "incrementalWindow" | "windowEvaluator"> {
  return {
    sendMetaToSink: o.sendMetaToSink,
    sendNil: o.sendNilField,
    isEventTime: o.isEventTime,
    lateTolerance: o.lateTolerance,
    incrementalWindow: o.incrementalWindow,
    windowEvaluator: o.windowEvaluator,
  };
}
