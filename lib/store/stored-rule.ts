/**
 * Rule JSON as the management layer sees it (rules-and-sinks.md §1–§2): decoding with Go's
 * case-insensitive keys, the validation order and messages of `POST /rules` (rest-api.md §5),
 * options merged over the kuiper.yaml `rule:` defaults, and the re-marshalling eKuiper does when
 * it rewrites `triggered` or `tags`.
 */
import { EngineError, ErrCode, errorText, TooLargeError } from "../errors.ts";
import { DEFINITION_TOO_DEEP, textTooDeep } from "../value/json-depth.ts";
import { assignField, field, goSyntaxError, isObject, jsonKind } from "../value/go-json.ts";
import { encodeGoJson } from "../value/json-encode.ts";
import type { Value } from "../value/values.ts";
import type { SelectStatement } from "../sql/ast.ts";
import type { FunctionSignatures } from "../sql/function-signatures.ts";
import { parseSharedSelect } from "../sql/shared-select.ts";
import { parseRuleOptions, type RuleOptions } from "../plan/rule-options.ts";
import { idError } from "./ids.ts";

export interface StoredRule {
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

/** The longest rule JSON floe stores, in characters: the REST body limit of definitions (docs/daemon.md, "Errors, limits and the safe start"). */
export const MAX_RULE_LENGTH = 256 * 1024;

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

/**
 * Parses and validates rule JSON (rest-api.md §5 step 1). Throws code-1000 errors whose message
 * is the reason without the `invalid rule json: ` prefix; `pathId` fills a missing id (PUT, CLI);
 * `keepBadSql` (boot recovery) leaves `select` undefined when the SQL does not parse.
 */
export function parseStoredRule(text: string, functions: FunctionSignatures, defaults: Readonly<Record<string, unknown>>, pathId?: string, opts: { keepBadSql?: boolean } = {}): StoredRule {
  // Refused before anything walks it, so that whatever is stored can be read back (docs/daemon.md, "Errors, limits and the safe start").
  if (text.length > MAX_RULE_LENGTH) throw new TooLargeError(`the rule definition is ${text.length} characters long, more than the limit of ${MAX_RULE_LENGTH}`);
  if (textTooDeep(text)) throw fail(DEFINITION_TOO_DEEP);
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw fail(`Parse rule ${text} error : ${jsonUnmarshalError(text) ?? "unexpected end of JSON input"}.`);
  }
  if (!isObject(o)) throw fail(`Parse rule ${text} error : json: cannot unmarshal ${jsonKind(o)} into Go value of type def.Rule.`);
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
  for (const a of actions) if (!isObject(a)) throw typeErr(a, "actions", "map[string]interface {}");
  if (sql !== "") {
    try {
      select = parseSharedSelect(sql, functions);
    } catch (e) {
      // A stored rule whose SQL no longer parses (its UDF was deleted or not loaded) is still
      // registered, so it can be inspected and deleted; starting it fails with the parse error.
      if (!opts.keepBadSql) throw e instanceof TooLargeError ? e : fail(errorText(e));
    }
    if (actions.length === 0) throw fail("Missing rule actions.");
  } else if (!hasGraph) throw fail(`Rule ${id} has neither sql nor graph.`);
  // A graph rule's sinks are its sink nodes: `actions` is ignored (graph-rules.md §1).
  else if (!isObject(graph)) throw fail(`Parse rule ${text} error : json: cannot unmarshal ${jsonKind(graph)} into Go struct field Rule.graph of type def.RuleGraph.`);
  const tagsV = field(o, "tags");
  let tags: string[] | null = null;
  if (tagsV !== undefined && tagsV !== null) {
    if (!Array.isArray(tagsV) || tagsV.some((t) => typeof t !== "string")) throw typeErr(tagsV, "tags", "[]string");
    tags = tagsV as string[];
  }
  const options = parseRuleOptions(id, field(o, "options"), defaults);
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
  for (const [k, v] of Object.entries(patch)) assignField(o, k, v);
  return encodeGoJson(o as Value);
}

/** Stream and table names the rule's SQL reads, in SQL order (no duplicates). */
export function ruleSources(def: StoredRule): string[] {
  if (def.graph !== undefined) return graphSources(def.graph);
  if (!def.select) return [];
  const names = [def.select.from.name, ...def.select.joins.map((j) => j.source.name)];
  return [...new Set(names)];
}

/** Replace guard (rules-and-sinks.md §1 `version`): allowed iff both empty or new > old. */
export function versionAllows(oldV: string, newV: string): boolean {
  return (oldV === "" && newV === "") || newV > oldV;
}

/** Each node listed in a graph's `topo.sources`, with its name and props (nothing for a malformed graph). */
function graphSourceNodes(graph: unknown): { name: string; props: Record<string, unknown> | undefined }[] {
  if (!isObject(graph)) return [];
  const nodes = field(graph, "nodes");
  const topo = field(graph, "topo");
  const list = isObject(topo) ? field(topo, "sources") : undefined;
  if (!isObject(nodes) || !Array.isArray(list)) return [];
  const out: { name: string; props: Record<string, unknown> | undefined }[] = [];
  for (const name of list) {
    if (typeof name !== "string") continue;
    const n = nodes[name];
    const props = isObject(n) ? field(n, "props") : undefined;
    out.push({ name, props: isObject(props) ? props : undefined });
  }
  return out;
}

/** The streams and tables a graph rule references by `sourceName` (graph-rules.md §4.1), in `topo.sources` order. */
export function graphSources(graph: unknown): string[] {
  const out: string[] = [];
  for (const { props } of graphSourceNodes(graph)) {
    const ref = props ? field(props, "sourceName") : undefined;
    if (typeof ref === "string" && ref !== "" && !out.includes(ref)) out.push(ref);
  }
  return out;
}

/** Topology names of a graph's stream sources (`source_<emitter>`), as validate lists them; tables have none. */
export function graphTopoSources(graph: unknown): string[] {
  const out: string[] = [];
  for (const { name, props } of graphSourceNodes(graph)) {
    const ref = props ? field(props, "sourceName") : undefined;
    if (props && field(props, "sourceType") === "table") continue;
    const s = "source_" + (typeof ref === "string" && ref !== "" ? ref : name);
    if (!out.includes(s)) out.push(s);
  }
  return out;
}
