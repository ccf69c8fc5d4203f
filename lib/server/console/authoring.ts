/**
 * What the console's editor asks as the user types (docs/console.md): `POST /ui/api/validate`
 * parses and plans a rule's SELECT (or checks a CREATE) against the engine's streams without
 * creating anything, and answers with eKuiper's message plus the CLI's errors for people (the spot,
 * the caret lines, "did you mean"); `GET /ui/api/catalog` lists the streams and tables with their
 * statements and fields, for completion and for editing a definition. Console routes: their
 * answers are the console's own JSON, not an eKuiper interface.
 */
import { EngineError, ErrCode, errorText } from "../../errors.ts";
import { diagnose, diagnosis, type Names } from "../../plan/diagnose.ts";
import { planRule } from "../../plan/plan-rule.ts";
import { parseRuleOptions } from "../../plan/rule-options.ts";
import { parseSelect, parseStatement } from "../../sql/parse.ts";
import { idError } from "../../store/ids.ts";
import { field, isObject, readJson } from "../body.ts";
import type { Engine } from "../engine.ts";
import { errorBody, json } from "../respond.ts";
import type { RouteDef } from "../router.ts";

export interface Verdict {
  readonly valid: boolean;
  /** eKuiper's message, as the REST call creating it would give it. */
  readonly message?: string;
  /** 1-based; absent when the error has no place in the text. */
  readonly line?: number;
  readonly column?: number;
  readonly length?: number;
  readonly suggestion?: { readonly name: string; readonly what: string };
  /** The CLI's lines below the message: `at sql:L:C`, the source line, the caret, "did you mean". */
  readonly detail?: string;
}

function names(e: Engine): Names {
  const columns: string[] = [];
  const streams: string[] = [];
  for (const d of e.catalog.all().values()) {
    streams.push(d.name);
    for (const f of d.fields ?? []) columns.push(f.name);
  }
  return { columns, streams };
}

/** Plans `sql` as a rule's SELECT, or checks it as a CREATE (`kind` "stream"), creating nothing. */
export function validate(e: Engine, sql: string, kind: "rule" | "stream"): Verdict {
  try {
    if (kind === "rule") {
      const select = parseSelect(sql, e.functions);
      planRule({ id: "validate", select, options: parseRuleOptions("validate", undefined) }, e.catalog.all(), { functions: e.functions, zone: e.zone });
    } else {
      const s = parseStatement(sql, e.functions);
      if (s.kind !== "create") throw new EngineError(`Invalid stream statement: ${sql}`, ErrCode.streamTable);
      const bad = idError(s.name);
      if (bad) throw new EngineError(bad, ErrCode.streamTable);
      e.catalog.check?.(s);
    }
    return { valid: true };
  } catch (err) {
    if (!(err instanceof EngineError)) throw err;
    const n = names(e);
    const d = diagnose(err, sql, n);
    return {
      valid: false,
      message: errorText(err),
      ...(d?.spot ? { line: d.spot.line, column: d.spot.column, length: d.spot.length } : {}),
      ...(d?.suggestion ? { suggestion: d.suggestion } : {}),
      detail: diagnosis(err, "sql", sql, n),
    };
  }
}

export const authoringRoutes: RouteDef<Engine>[] = [
  {
    method: "POST",
    path: "/ui/api/validate",
    handler: async (ctx, e) => {
      const b = await readJson(ctx);
      if (!b.ok) return errorBody(ErrCode.undefined, `Invalid body: ${b.error}`);
      const sql = isObject(b.value) ? field(b.value, "sql") : undefined;
      const kind = isObject(b.value) ? (field(b.value, "kind") ?? "rule") : undefined;
      if (typeof sql !== "string" || (kind !== "rule" && kind !== "stream")) return errorBody(ErrCode.undefined, 'Invalid body: want {"sql": string, "kind": "rule" | "stream"}');
      return json(validate(e, sql, kind));
    },
  },
  {
    method: "GET",
    path: "/ui/api/catalog",
    handler: (_ctx, e) =>
      json([...e.catalog.all().values()].map((d) => ({ name: d.name, kind: d.kind, statement: d.statement, fields: d.fields === null ? null : d.fields.map((f) => f.name) }))),
  },
];
