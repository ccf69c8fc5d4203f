/**
 * Rule JSON as the management layer sees it (rules-and-sinks.md §1–§2): decoding with Go's
 * case-insensitive keys, the validation order and messages of `POST /rules` (rest-api.md §5),
 * options merged over the kuiper.yaml `rule:` defaults, and the re-marshalling eKuiper does when
 * it rewrites `triggered` or `tags`.
 */
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { parseGoDuration } from "../expr/duration.ts";
import { goSyntaxError } from "../functions/go-json.ts";
import { encodeGoJson } from "../io/formats/json-encode.ts";
import type { Value } from "../expr/values.ts";
import type { SelectStatement } from "../sql/ast.ts";
import { parseSelect } from "../sql/parse.ts";
import { idError } from "./ids.ts";

export interface DatetimeRange {
  readonly begin: string;
  readonly end: string;
  readonly beginTimestamp: number;
  readonly endTimestamp: number;
}

/** Options after defaults; durations in ms. Unknown option keys are kept in `raw`. */
export interface RuleOptions {
  readonly isEventTime: boolean;
  readonly lateTolerance: number;
  readonly concurrency: number;
  readonly bufferLength: number;
  readonly sendMetaToSink: boolean;
  readonly sendNilField: boolean;
  readonly sendError: boolean;
  readonly qos: number;
  readonly checkpointInterval: number;
  readonly restartStrategy: { readonly attempts: number };
  readonly cron: string;
  readonly duration: string;
  readonly cronDatetimeRange: readonly DatetimeRange[];
  readonly disableBufferFullDiscard: boolean;
  /** The merged option object as JSON (for the runtime, which reads what it needs). */
  readonly raw: Readonly<Record<string, unknown>>;
}

export interface RuleDef {
  readonly id: string;
  readonly name: string;
  readonly version: string;
  readonly triggered: boolean;
  readonly temp: boolean;
  readonly sql: string;
  readonly select: SelectStatement | undefined;
  readonly graph: unknown;
  readonly actions: readonly Record<string, unknown>[];
  readonly options: RuleOptions;
  readonly tags: readonly string[] | null;
  /** The stored JSON text (byte for byte what was submitted, until a rewrite). */
  readonly text: string;
}

const fail = (message: string) => new EngineError(message, ErrCode.undefined);

/** Go `json.Unmarshal` error text for `text` (syntax), or undefined when it is valid JSON. */
export function jsonUnmarshalError(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    return goSyntaxError(text) ?? "unexpected end of JSON input";
  }
}

/** Go `json.NewDecoder(body).Decode` error text (`EOF` for an empty body, `unexpected EOF` for a cut one). */
export function jsonDecodeError(text: string): string | undefined {
  if (text.trim() === "") return "EOF";
  const e = jsonUnmarshalError(text);
  return e === "unexpected end of JSON input" ? "unexpected EOF" : e;
}

/** Case-insensitive field read of a decoded JSON object (Go struct decoding). */
function field(o: Record<string, unknown>, name: string): unknown {
  if (name in o) return o[name];
  const lower = name.toLowerCase();
  let v: unknown;
  for (const k of Object.keys(o)) if (k.toLowerCase() === lower) v = o[k];
  return v;
}

function jsonKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "object") return "object";
  return typeof v;
}

function typeErr(v: unknown, path: string, goType: string): EngineError {
  return fail(`json: cannot unmarshal ${jsonKind(v)} into Go struct field Rule.${path} of type ${goType}`);
}

function strField(o: Record<string, unknown>, name: string): string {
  const v = field(o, name);
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw typeErr(v, name, "string");
  return v;
}

function boolField(o: Record<string, unknown>, name: string, dflt: boolean): boolean {
  const v = field(o, name);
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "boolean") throw typeErr(v, name, "bool");
  return v;
}

function durationOpt(v: unknown, key: string, dflt: number, errs: string[]): number {
  if (v === undefined || v === null) return dflt;
  if (typeof v === "number") {
    if (!Number.isInteger(v)) {
      errs.push(`duration ${v} is not an integer`);
      return dflt;
    }
    return v;
  }
  if (typeof v === "string") {
    try {
      return Number(parseGoDuration(v) / 1_000_000n);
    } catch (e) {
      errs.push(errorText(e));
      return dflt;
    }
  }
  errs.push(`${key}: invalid duration`);
  return dflt;
}

const DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** Merges the rule's options over the defaults and validates them (rules-and-sinks.md §2). */
export function ruleOptions(given: unknown, defaults: Readonly<Record<string, unknown>>, id: string): RuleOptions {
  const o: Record<string, unknown> = { ...defaults };
  if (given && typeof given === "object" && !Array.isArray(given)) {
    for (const [k, v] of Object.entries(given)) {
      const known = Object.keys(o).find((x) => x.toLowerCase() === k.toLowerCase());
      if (known && known !== k) delete o[known];
      o[k] = v;
    }
  } else if (given !== undefined && given !== null) {
    throw fail(`json: cannot unmarshal ${jsonKind(given)} into Go struct field Rule.options of type def.RuleOption`);
  }
  const errs: string[] = [];
  const decodeErrs: string[] = [];
  const num = (k: string, d: number) => {
    const v = field(o, k);
    if (v === undefined || v === null) return d;
    if (typeof v !== "number") {
      decodeErrs.push(`json: cannot unmarshal ${jsonKind(v)} into Go struct field RuleOption.options.${k} of type int`);
      return d;
    }
    return Math.trunc(v);
  };
  const bool = (k: string) => {
    const v = field(o, k);
    if (v === undefined || v === null) return false;
    if (typeof v !== "boolean") {
      decodeErrs.push(`json: cannot unmarshal ${jsonKind(v)} into Go struct field RuleOption.options.${k} of type bool`);
      return false;
    }
    return v;
  };
  const str = (k: string) => {
    const v = field(o, k);
    if (v === undefined || v === null) return "";
    if (typeof v !== "string") {
      decodeErrs.push(`json: cannot unmarshal ${jsonKind(v)} into Go struct field RuleOption.options.${k} of type string`);
      return "";
    }
    return v;
  };
  const concurrency = num("concurrency", 1);
  const bufferLength = num("bufferLength", 1024);
  const lateTolerance = durationOpt(field(o, "lateTolerance"), "lateTolerance", 1000, decodeErrs);
  const checkpointInterval = durationOpt(field(o, "checkpointInterval"), "checkpointInterval", 300_000, decodeErrs);
  const rs = field(o, "restartStrategy");
  const attempts = rs && typeof rs === "object" && typeof field(rs as Record<string, unknown>, "attempts") === "number" ? Math.trunc(field(rs as Record<string, unknown>, "attempts") as number) : 0;
  const ranges: DatetimeRange[] = [];
  const cdr = field(o, "cronDatetimeRange");
  if (Array.isArray(cdr)) {
    for (const r of cdr) {
      const x = (r ?? {}) as Record<string, unknown>;
      ranges.push({
        begin: typeof field(x, "begin") === "string" ? (field(x, "begin") as string) : "",
        end: typeof field(x, "end") === "string" ? (field(x, "end") as string) : "",
        beginTimestamp: typeof field(x, "beginTimestamp") === "number" ? (field(x, "beginTimestamp") as number) : 0,
        endTimestamp: typeof field(x, "endTimestamp") === "number" ? (field(x, "endTimestamp") as number) : 0,
      });
    }
  }
  const duration = str("duration");
  if (decodeErrs.length) throw fail(decodeErrs[0]!);
  if (concurrency < 0) errs.push("invalidConcurrency:concurrency must be greater than 0");
  if (bufferLength < 0) errs.push("invalidBufferLength:bufferLength must be greater than 0");
  if (lateTolerance < 0) errs.push("invalidLateTol:lateTol must be greater than 0");
  if (attempts < 0) errs.push("invalidRestartAttempts:restart attempts must be greater than 0");
  for (const r of ranges) {
    if (r.beginTimestamp > 0 && r.endTimestamp > 0) {
      if (r.beginTimestamp > r.endTimestamp) errs.push("validate cronDatetimeRange failed, err:begin time shouldn't after end time");
      continue;
    }
    const b = DATETIME.test(r.begin);
    const e = DATETIME.test(r.end);
    if (!b) errs.push(`validate cronDatetimeRange failed, err:parsing time ${JSON.stringify(r.begin)} as "2006-01-02 15:04:05": cannot parse ${JSON.stringify(r.begin)} as "2006"`);
    else if (!e) errs.push(`validate cronDatetimeRange failed, err:parsing time ${JSON.stringify(r.end)} as "2006-01-02 15:04:05": cannot parse ${JSON.stringify(r.end)} as "2006"`);
    else if (r.begin > r.end) errs.push("validate cronDatetimeRange failed, err:begin time shouldn't after end time");
  }
  if (duration) {
    try {
      parseGoDuration(duration);
    } catch (e) {
      errs.push(errorText(e));
    }
  }
  if (errs.length) throw fail(`Rule ${id} has invalid options: ${errs.join("\n")}.`);
  return {
    isEventTime: bool("isEventTime"),
    lateTolerance,
    concurrency,
    bufferLength,
    sendMetaToSink: bool("sendMetaToSink"),
    sendNilField: bool("sendNilField"),
    sendError: bool("sendError"),
    qos: num("qos", 0),
    checkpointInterval,
    restartStrategy: { attempts },
    cron: str("cron"),
    duration,
    cronDatetimeRange: ranges,
    disableBufferFullDiscard: bool("disableBufferFullDiscard"),
    raw: o,
  };
}

/**
 * Parses and validates rule JSON (rest-api.md §5 step 1). Throws code-1000 errors whose message
 * is the reason without the `invalid rule json: ` prefix; `pathId` fills a missing id (PUT, CLI).
 */
export function parseRuleDef(text: string, defaults: Readonly<Record<string, unknown>>, pathId?: string): RuleDef {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw fail(`Parse rule ${text} error : ${jsonUnmarshalError(text) ?? "unexpected end of JSON input"}.`);
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw fail(`Parse rule ${text} error : json: cannot unmarshal ${jsonKind(v)} into Go value of type def.Rule.`);
  const o = v as Record<string, unknown>;
  let id = strField(o, "id");
  if (pathId !== undefined) {
    if (id === "") id = pathId;
    else if (id !== pathId) throw fail("RuleId is not consistent with rule id.");
  }
  if (id === "") throw fail("Missing rule id.");
  const idErr = idError(id);
  if (idErr) throw fail(idErr);
  const sql = strField(o, "sql");
  const graph = field(o, "graph");
  const hasGraph = graph !== undefined && graph !== null;
  if (sql !== "" && hasGraph) throw fail(`Rule ${id} has both sql and graph.`);
  let select: SelectStatement | undefined;
  const actionsV = field(o, "actions");
  if (actionsV !== undefined && actionsV !== null && !Array.isArray(actionsV)) throw typeErr(actionsV, "actions", "[]map[string]interface {}");
  const actions = (Array.isArray(actionsV) ? actionsV : []) as Record<string, unknown>[];
  for (const a of actions) if (a === null || typeof a !== "object" || Array.isArray(a)) throw typeErr(a, "actions", "map[string]interface {}");
  if (sql !== "") {
    try {
      select = parseSelect(sql);
    } catch (e) {
      throw fail(errorText(e));
    }
    if (actions.length === 0) throw fail("Missing rule actions.");
  } else if (!hasGraph) throw fail(`Rule ${id} has neither sql nor graph.`);
  else throw fail("graph rules are not supported");
  const tagsV = field(o, "tags");
  let tags: string[] | null = null;
  if (tagsV !== undefined && tagsV !== null) {
    if (!Array.isArray(tagsV) || tagsV.some((t) => typeof t !== "string")) throw typeErr(tagsV, "tags", "[]string");
    tags = tagsV as string[];
  }
  const options = ruleOptions(field(o, "options"), defaults, id);
  return {
    id,
    name: strField(o, "name"),
    version: strField(o, "version"),
    triggered: boolField(o, "triggered", true),
    temp: boolField(o, "temp", false),
    sql,
    select,
    graph: hasGraph ? graph : undefined,
    actions,
    options,
    tags,
    text,
  };
}

/** The stored text re-marshalled as a generic map with `patch` applied (sorted keys, compact). */
export function rewriteRuleText(text: string, patch: Record<string, unknown>): string {
  const o = JSON.parse(text) as Record<string, unknown>;
  for (const [k, v] of Object.entries(patch)) {
    for (const key of Object.keys(o)) if (key.toLowerCase() === k.toLowerCase() && key !== k) delete o[key];
    o[k] = v;
  }
  return encodeGoJson(o as Value);
}

/** Stream and table names the rule's SQL reads, in SQL order (no duplicates). */
export function ruleSources(def: RuleDef): string[] {
  if (!def.select) return [];
  const names = [def.select.from.name, ...def.select.joins.map((j) => j.source.name)];
  return [...new Set(names)];
}

/** Replace guard (rules-and-sinks.md §1 `version`): allowed iff both empty or new > old. */
export function versionAllows(oldV: string, newV: string): boolean {
  return (oldV === "" && newV === "") || newV > oldV;
}
