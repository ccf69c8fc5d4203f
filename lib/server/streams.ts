/** `/streams` and `/tables` (rest-api.md §4): one set of handlers, the type word from the route. */
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { sourceType } from "../connectors/sources.ts";
import { streamColumns } from "../plan/plan-rule.ts";
import type { StreamDef } from "../plan/streams.ts";
import { describeJson, schemaJson } from "../store/describe.ts";
import { idError } from "../store/ids.ts";
import { field, isObject, parseBool, readJson } from "./body.ts";
import type { Engine } from "./engine.ts";
import { errorBody, fromError, GoMap, htmlEscape, json, sentence } from "./respond.ts";
import type { RouteDef } from "./router.ts";

type Kind = "stream" | "table";
const Title = (k: Kind) => (k === "stream" ? "Stream" : "Table");

async function sqlBody(ctx: Parameters<RouteDef<Engine>["handler"]>[0]): Promise<{ sql: string } | Response> {
  const b = await readJson(ctx);
  if (!b.ok) return errorBody(ErrCode.undefined, `Invalid body: Error decoding the statement descriptor: ${b.error}`);
  if (!isObject(b.value)) return errorBody(ErrCode.undefined, `Invalid body: Error decoding the statement descriptor: json: cannot unmarshal ${Array.isArray(b.value) ? "array" : typeof b.value} into Go value of type struct { Sql string "json:\\"sql\\"" }`);
  const s = field(b.value, "sql");
  return { sql: typeof s === "string" ? s : "" };
}

/**
 * The schema of a shared schemaless stream, as eKuiper's shared layer merges it: the union of the
 * columns its registered rules read (a rule adds its fields when created, they go when it is
 * deleted), each `null`, or `{"hasIndex":true,"index":n}` (n in name order) once a rule uses
 * `experiment.useSliceTuple`. `null` when no rule reads it, or one reads every column (`*`).
 */
function sharedSchema(e: Engine, d: StreamDef): unknown {
  const names = new Set<string>();
  let sliced = false;
  for (const id of e.rules.referencing(d.name)) {
    const def = e.rules.get(id)!.def;
    if (!def.select) continue;
    let cols;
    try {
      cols = streamColumns({ id, select: def.select, options: def.options }, d.name, e.catalog.all(), { functions: e.functions, zone: e.zone });
    } catch {
      continue; // a rule that no longer plans (a stream it reads was dropped) reads nothing
    }
    if (cols === null) return null;
    for (const c of cols ?? []) names.add(c);
    sliced ||= def.options.useSliceTuple;
  }
  if (names.size === 0) return null;
  const out: Record<string, unknown> = {};
  [...names].sort().forEach((n, index) => (out[n] = sliced ? { hasIndex: true, index } : null));
  return new GoMap(out);
}

function routesFor(kind: Kind): RouteDef<Engine>[] {
  const base = `/${kind}s`;
  const prefix = `${Title(kind)} command error`;
  return [
    {
      method: "GET",
      path: base,
      handler: (ctx, e) => json(e.catalog.names(kind, kind === "table" ? (ctx.query.get("kind") ?? undefined) : undefined)),
    },
    {
      method: "POST",
      path: base,
      handler: async (ctx, e) => {
        const b = await sqlBody(ctx);
        if (b instanceof Response) return b;
        try {
          return sentence(htmlEscape(e.catalog.exec(b.sql)), 201);
        } catch (err) {
          return fromError(err, prefix);
        }
      },
    },
    {
      method: "GET",
      path: `/${kind}details`,
      handler: (ctx, e) => {
        const tk = kind === "table" ? (ctx.query.get("kind") ?? undefined) : undefined;
        return json(
          e.catalog.names(kind, tk).map((n) => {
            const d = e.catalog.get(n)!;
            return { name: n, type: sourceType(d), format: (d.options.FORMAT ?? "json").toLowerCase() };
          }),
        );
      },
    },
    {
      method: "GET",
      path: `${base}/{name}`,
      handler: (ctx, e) => {
        const name = ctx.params.name!;
        const ie = idError(name);
        if (ie) return errorBody(ErrCode.streamTable, `describe ${kind} error: ${ie}`);
        try {
          return json(describeJson(e.catalog.describe(name, kind, "Describe")));
        } catch (err) {
          return errorBody(ErrCode.streamTable, `describe ${kind} error: ${errorText(err)}`);
        }
      },
    },
    {
      method: "DELETE",
      path: `${base}/{name}`,
      handler: (ctx, e) => {
        const name = ctx.params.name!;
        const ie = idError(name);
        if (ie) return errorBody(ErrCode.streamTable, `delete ${kind} error: ${ie}`);
        if (!e.catalog.get(name)) return errorBody(ErrCode.notFound, `delete ${kind} error: ${kind} ${name} is not found`);
        if (!parseBool(ctx.query.get("force")) && e.rules.referencing(name).length > 0)
          return errorBody(ErrCode.undefined, `stream ${name} has been referenced by other rules`);
        e.catalog.remove(name);
        return sentence(`${Title(kind)} ${name} is dropped.`);
      },
    },
    {
      method: "PUT",
      path: `${base}/{name}`,
      handler: async (ctx, e) => {
        const name = ctx.params.name!;
        const ie = idError(name);
        if (ie) return errorBody(ErrCode.streamTable, `${prefix}: ${ie}`);
        const b = await sqlBody(ctx);
        if (b instanceof Response) return b;
        try {
          return sentence(e.catalog.replace(name, b.sql, kind));
        } catch (err) {
          return fromError(err, prefix);
        }
      },
    },
    {
      method: "GET",
      path: `${base}/{name}/schema`,
      handler: (ctx, e) => {
        const name = ctx.params.name!;
        try {
          const d = e.catalog.describe(name, kind, "Describe");
          // A schemaless protobuf stream's schema is its message's (rest-api.md §4).
          const proto = d.fields === null && (d.options.FORMAT ?? "").toLowerCase() === "protobuf";
          if (d.fields === null && !proto && d.options.SHARED) return json(sharedSchema(e, d));
          return json(schemaJson(proto ? e.schemas.fields(d.options.SCHEMAID ?? "") : d.fields));
        } catch (err) {
          return fromError(err instanceof EngineError ? err : new EngineError(errorText(err), ErrCode.streamTable), `get schema of ${kind} error`);
        }
      },
    },
  ];
}

export const streamRoutes = routesFor("stream");
export const tableRoutes = routesFor("table");
