/**
 * A definition from the group is checked as REST checks the same definition before anything of it
 * is applied (cluster/definitions.ts refuses it whole otherwise): the body limit and JSON depth of
 * a definition request, then per namespace the functions the REST routes call — the stream
 * statement parse with its id and schema checks, the rule parse (id, options, SQL) and plan, the
 * confKey props, the JavaScript UDF's id and script. `staticEntryError` is the part that needs no
 * engine (a member's start-up, before the engine exists); `groupEntryError` is all of it.
 */
import type { DefinitionChange } from "../cluster/index.ts";
import { errorText } from "../errors.ts";
import { parseStatement } from "../sql/parse.ts";
import { idError } from "../store/ids.ts";
import { DEFINITION_TOO_DEEP, textTooDeep } from "../value/json-depth.ts";
import type { FunctionRegistry } from "../functions/index.ts";
import type { ScriptDef } from "../functions/js-udf.ts";
import type { StreamCatalog } from "../store/stream-catalog.ts";
import { MAX_DEFINITION_BODY } from "./request-body.ts";
import type { RuleManager } from "./rule-manager.ts";

/** What the check reads of the engine (server/cluster-apply.ts's GroupHost has it). */
export interface EntryCheckHost {
  readonly catalog: StreamCatalog;
  readonly rules: RuleManager;
  readonly functions: FunctionRegistry;
  readonly scripts: ReadonlyMap<string, ScriptDef>;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** What any member can check of a change on its own: size, depth, JSON shape, the id in the value. */
export function staticEntryError(c: DefinitionChange): string | undefined {
  const { ns, key, value } = c;
  if (value === undefined) return undefined;
  if (value.length > MAX_DEFINITION_BODY) return `the definition is ${value.length} characters long, more than the limit of ${MAX_DEFINITION_BODY}`;
  if (textTooDeep(value)) return DEFINITION_TOO_DEEP;
  let o: unknown;
  try {
    o = JSON.parse(value);
  } catch {
    return "the definition is not JSON";
  }
  if (!isObject(o)) return "the definition is not a JSON object";
  switch (ns) {
    case "stream":
    case "tempStream":
      return typeof o.statement === "string" ? undefined : "a stream entry needs its statement";
    case "rule":
      return o.id === undefined || o.id === key ? undefined : `the rule's id ${JSON.stringify(o.id)} is not its key ${key}`;
    case "script":
      if (o.id !== key) return `the function's id ${JSON.stringify(o.id)} is not its key ${key}`;
      return typeof o.script === "string" && o.script !== "" ? undefined : "script is required";
    default:
      return undefined;
  }
}

/** Why the engine refuses the change as REST would, or undefined: nothing is applied before it passes. */
export function groupEntryError(engine: EntryCheckHost, c: DefinitionChange): string | undefined {
  const early = staticEntryError(c);
  if (early !== undefined || c.value === undefined) return early;
  try {
    switch (c.ns) {
      case "stream":
      case "tempStream": {
        const sql = (JSON.parse(c.value) as { statement: string }).statement;
        const s = parseStatement(sql, engine.functions);
        if (s.kind !== "create") return `Invalid stream statement: ${sql}`;
        if (s.name !== c.key) return `the statement creates ${s.name}, not ${c.key}`;
        const ie = idError(s.name);
        if (ie) return ie;
        if ((s.options.TEMP === true) !== (c.ns === "tempStream")) return `the TEMP option does not match the namespace ${c.ns}`;
        engine.catalog.check?.(s);
        return undefined;
      }
      case "rule":
        engine.rules.validateDef(engine.rules.parse(c.value, c.key));
        return undefined;
      case "script":
        if (!engine.scripts.has(c.key) && engine.functions.lookup(c.key)) return `function ${c.key} already exists as a built-in function`;
        return undefined;
      default:
        return undefined;
    }
  } catch (e) {
    return errorText(e);
  }
}
