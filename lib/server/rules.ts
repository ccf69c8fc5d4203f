/** `/rules/**` (rest-api.md §5, §7): CRUD, lifecycle, status, topology, explain, tags, bulk. */
import { EngineError, ErrCode, errorText } from "../errors.ts";
import type { OpSpec } from "../plan/specs.ts";
import { planRule } from "../plan/plan-rule.ts";
import { graphTopoSources, ruleSources } from "../store/stored-rule.ts";
import { field, isObject, readJson, unmarshalTypeError } from "./body.ts";
import { maskSecrets } from "./confkeys.ts";
import { encodeGoJson } from "../value/json-encode.ts";
import type { Value } from "../value/values.ts";
import { groupRuleStatus } from "./cluster.ts";
import { purgePartials } from "../cluster/index.ts";
import type { Engine } from "./engine.ts";
import { statusText } from "./rule-manager.ts";
import type { TraceStrategy } from "../runtime/trace/rule-tracer.ts";
import { empty, errorBody, fromError, GoMap, idRefusal, json, jsonSniffed, rawJson, sentence } from "./respond.ts";
import type { Ctx, RouteDef } from "./router.ts";

type R = RouteDef<Engine>;

/**
 * The stored text, byte for byte, unless it holds secrets: then the rule re-marshalled with them
 * masked as `******` (floe's deliberate difference, rest-api.md §20).
 */
function maskedRuleText(text: string): string {
  const v = JSON.parse(text) as unknown;
  const masked = maskSecrets(v);
  return JSON.stringify(masked) === JSON.stringify(v) ? text : encodeGoJson(masked as Value);
}

async function tagsBody(ctx: Ctx): Promise<string[] | Response> {
  const b = await readJson(ctx);
  if (!b.ok) return errorBody(ErrCode.undefined, `decode body error: ${b.error}`);
  if (!isObject(b.value)) return errorBody(ErrCode.undefined, `decode body error: ${unmarshalTypeError(b.value, "server.ruleTagRequest")}`);
  const t = field(b.value, "tags");
  if (t !== undefined && t !== null && (!Array.isArray(t) || t.some((x) => typeof x !== "string")))
    return errorBody(ErrCode.undefined, "decode body error: json: cannot unmarshal into Go struct field ruleTagRequest.tags of type []string");
  return (t as string[] | undefined) ?? [];
}

const PLAN_TYPE: Partial<Record<OpSpec["kind"], string>> = {
  watermark: "WatermarkPlan",
  preprocessor: "DataSourcePlan",
  analytic: "AnalyticFuncsPlan",
  filter: "FilterPlan",
  windowFilter: "FilterPlan",
  window: "WindowPlan",
  join_aligner: "JoinAlignPlan",
  join: "JoinPlan",
  lookup: "LookupPlan",
  agg_func: "AggFuncPlan",
  aggregate: "AggregatePlan",
  having: "HavingPlan",
  windowFunc: "WindowFuncPlan",
  order: "OrderPlan",
  project: "ProjectPlan",
  projectset: "ProjectSetPlan",
};

/** One plan node of explain; a window names its evaluator (lib/plan/plan-window.ts). */
function explainNode(op: OpSpec): { op: string; info: string } {
  if (op.kind !== "window") return { op: PLAN_TYPE[op.kind] ?? "Plan", info: op.name };
  const type = op.name.endsWith("_inc_agg_window") ? "IncAggWindowPlan" : "WindowPlan";
  return { op: type, info: `${op.name} ${op.window.call.name.toUpperCase()} evaluator: ${op.inc ? "incremental" : "buffered"}` };
}

/** The explain text: the plan as a chain from the projection down to the sources. */
function explain(e: Engine, id: string): string {
  const text = e.rules.describe(id);
  const def = e.rules.parse(text);
  if (!def.select) throw new EngineError("only support explain sql now", ErrCode.undefined);
  const plan = planRule({ id, select: def.select, options: def.options }, e.catalog.all(), { functions: e.functions, zone: e.zone }).plan;
  const chain: { op: string; info: string }[] = [];
  for (const op of [...plan.ops].reverse()) chain.push(explainNode(op));
  for (const s of plan.sources) for (const h of [...s.helpers].reverse()) if (h.kind === "filter") chain.push({ op: "FilterPlan", info: h.name });
  const lines: string[] = [];
  chain.forEach((n, d) => lines.push("\t".repeat(d === 0 ? 0 : 2 * d - 1) + JSON.stringify({ op: `${n.op}_${d}`, info: n.info })));
  const depth = chain.length;
  for (const s of plan.sources) {
    const fields = s.columns ? [...s.columns].join(", ") : "*";
    lines.push("\t".repeat(depth === 0 ? 0 : 2 * depth - 1) + JSON.stringify({ op: `DataSourcePlan_${depth}`, info: `StreamName: ${s.name}, StreamFields:[ ${fields} ]` }));
  }
  return lines.join("\n");
}

/**
 * Output schema of a rule: its visible select fields (a wildcard: the declared columns of its
 * streams) in order, each `{"hasIndex":true,"index":n}`. eKuiper gives no type, even for a
 * declared column.
 */
function outputSchema(e: Engine, id: string): Record<string, unknown> {
  const def = e.rules.get(id)!.def;
  const out: Record<string, unknown> = {};
  let i = 0;
  const add = (name: string) => (out[name] = { hasIndex: true, index: i++ });
  for (const f of def.select?.fields ?? []) {
    if (f.invisible) continue;
    if (f.expr.kind !== "wildcard") add(f.name);
    else for (const s of ruleSources(def)) if (f.expr.stream === undefined || f.expr.stream === s) for (const df of e.catalog.get(s)?.fields ?? []) add(df.name);
  }
  return out;
}

async function bulk(ctx: Ctx, e: Engine, stop: boolean): Promise<Response> {
  const b = await readJson(ctx);
  if (!b.ok) return errorBody(ErrCode.undefined, `decode body error: ${b.error}`);
  const tags = isObject(b.value) && Array.isArray(field(b.value, "tags")) ? (field(b.value, "tags") as string[]) : [];
  const ids = e.rules.matchTags(tags);
  if (ids.length === 0) return errorBody(ErrCode.undefined, `bulk ${stop ? "stop" : "start"} failed: no matching rules`);
  const out: { ruleId: string; success: boolean; error?: string }[] = [];
  for (const id of ids) {
    try {
      if (stop) await e.rules.stop(id);
      else await e.rules.start(id);
      out.push({ ruleId: id, success: true });
    } catch (err) {
      out.push({ ruleId: id, success: false, error: errorText(err) });
    }
  }
  return json(out);
}

export const ruleRoutes: R[] = [
  { method: "GET", path: "/rules", handler: (_c, e) => json(new GoMap(e.rules.list())) },
  {
    method: "POST",
    path: "/rules",
    handler: async (ctx, e) => {
      const text = await ctx.text();
      try {
        const id = e.rules.create(text);
        return sentence(`Rule ${id} was created successfully.`, 201);
      } catch (err) {
        return fromError(err);
      }
    },
  },
  {
    method: "DELETE",
    path: "/rules/{name}",
    handler: async (ctx, e) => {
      const id = ctx.params.name!;
      const bad = idRefusal(id, "Delete rule error");
      if (bad) return bad;
      try {
        await e.rules.delete(id);
        // The group's per-partition checkpoints go with the rule, once, by the member that deleted it.
        if (e.cluster) await e.cluster.checkpoints.clear(id).catch((err: unknown) => e.log(`cluster: clearing the checkpoints of rule ${id}: ${errorText(err)}`));
        // …and so do a two-stage rule's partial aggregates (docs/group.md, "Two-stage aggregation").
        if (e.cluster) await purgePartials(e.cluster.nc, e.cluster.settings.group, id).catch((err: unknown) => e.log(`cluster: purging the partial aggregates of rule ${id}: ${errorText(err)}`));
        return sentence(`Rule ${id} is dropped.`);
      } catch (err) {
        return fromError(err, "Delete rule error");
      }
    },
  },
  {
    method: "GET",
    path: "/rules/{name}",
    handler: (ctx, e) => {
      const id = ctx.params.name!;
      const bad = idRefusal(id, "Describe rule error");
      if (bad) return bad;
      try {
        return rawJson(maskedRuleText(e.rules.describe(id)));
      } catch (err) {
        return fromError(err, "Describe rule error");
      }
    },
  },
  {
    method: "PUT",
    path: "/rules/{name}",
    handler: async (ctx, e) => {
      const id = ctx.params.name!;
      const bad = idRefusal(id, "Update rule error");
      if (bad) return bad;
      const text = await ctx.text();
      try {
        e.rules.update(id, text);
        return sentence(`Rule ${id} was updated successfully.`);
      } catch (err) {
        return fromError(err, "Update rule error");
      }
    },
  },
  { method: "GET", path: "/rules/status/all", handler: (_c, e) => json(e.rules.statusAll()) },
  {
    method: "GET",
    path: "/rules/{name}/status",
    handler: async (ctx, e) => {
      try {
        if (e.cluster) {
          const g = await groupRuleStatus(e, ctx.params.name!, ctx.query.get("instance") ?? "");
          return "each" in g ? json(g.each) : rawJson(statusText(g.entries));
        }
        return rawJson(e.rules.statusText(ctx.params.name!));
      } catch (err) {
        return fromError(err, "get rule status error");
      }
    },
  },
  {
    method: "GET",
    path: "/v2/rules/{name}/status",
    handler: async (ctx, e) => {
      try {
        if (e.cluster) {
          const g = await groupRuleStatus(e, ctx.params.name!, ctx.query.get("instance") ?? "");
          return jsonSniffed(new GoMap("each" in g ? g.each : Object.fromEntries(g.entries)));
        }
        return jsonSniffed(new GoMap(e.rules.statusMap(ctx.params.name!)));
      } catch (err) {
        return fromError(err, "get rule status error");
      }
    },
  },
  {
    method: "POST",
    path: "/rules/{name}/start",
    handler: async (ctx, e) => {
      const id = ctx.params.name!;
      try {
        await e.rules.start(id);
        return sentence(`Rule ${id} was started`);
      } catch (err) {
        return fromError(err, "start rule error");
      }
    },
  },
  {
    method: "POST",
    path: "/rules/{name}/stop",
    handler: async (ctx, e) => {
      const id = ctx.params.name!;
      try {
        await e.rules.stop(id);
        return sentence(`Rule ${id} was stopped.`);
      } catch (err) {
        return fromError(err, "stop rule error");
      }
    },
  },
  {
    method: "POST",
    path: "/rules/{name}/restart",
    handler: async (ctx, e) => {
      const id = ctx.params.name!;
      try {
        await e.rules.restart(id);
        return sentence(`Rule ${id} was restarted`);
      } catch (err) {
        return fromError(err, "restart rule error");
      }
    },
  },
  {
    method: "GET",
    path: "/rules/{name}/topo",
    handler: (ctx, e) => {
      try {
        return json(e.rules.topo(ctx.params.name!));
      } catch (err) {
        return fromError(err, "get rule topo error");
      }
    },
  },
  {
    method: "GET",
    path: "/rules/{id}/schema",
    handler: (ctx, e) => {
      const id = ctx.params.id!;
      try {
        e.rules.topo(id);
        // eKuiper computes no schema for a graph rule (graph-rules.md §9).
        if (e.rules.get(id)?.def.graph !== undefined) return json(null);
        return json(new GoMap(outputSchema(e, id)));
      } catch (err) {
        return fromError(err, "get rule schema error");
      }
    },
  },
  ...(["start", "stop"] as const).map(
    (what): R => ({
      method: "POST",
      path: `/rules/{name}/trace/${what}`,
      handler: async (ctx, e) => {
        const id = ctx.params.name!;
        let strategy: TraceStrategy = "always";
        if (what === "start") {
          const b = await readJson(ctx);
          if (!b.ok) return errorBody(ErrCode.undefined, `Invalid body: Error decoding json: ${b.error}`);
          // Matched case-insensitively; anything else (or none) is `always` (rest-api.md §5).
          const s = b.value !== null && typeof b.value === "object" ? (b.value as Record<string, unknown>).strategy : undefined;
          if (typeof s === "string" && s.toLowerCase() === "head") strategy = "head";
        }
        const lc = e.rules.get(id);
        if (!lc) return errorBody(ErrCode.undefined, `rule ${id} isn't existed`);
        if (!lc.running) return errorBody(ErrCode.undefined, `rule ${lc.def.name} set trace failed due to rule didn't started`);
        lc.setTrace(what === "start" ? strategy : undefined);
        return empty();
      },
    }),
  ),
  {
    method: "GET",
    path: "/rules/usage/cpu",
    handler: (_c, e) => (e.config.basic.resourceProfile ? sentence("cpu usage not ready") : sentence("cpu usage not enabled")),
  },
  {
    method: "POST",
    path: "/rules/validate",
    handler: async (ctx, e) => {
      const text = await ctx.text();
      const plain = (m: string) => new Response(m, { status: 422, headers: { "Content-Type": "text/plain; charset=utf-8" } });
      let def;
      try {
        def = e.rules.parse(text);
      } catch (err) {
        return plain(`invalid rule json: ${errorText(err)}`);
      }
      // A graph is planned whole, sources and sinks included (graph-rules.md §9).
      if (def.graph !== undefined) {
        try {
          e.rules.validateDef(def);
        } catch (err) {
          return plain(`invalid ruleDef graph: ${errorText(err)}`);
        }
        return jsonSniffed(new GoMap({ sources: graphTopoSources(def.graph), valid: true }));
      }
      const sources = ruleSources(def);
      for (const s of sources) if (!e.catalog.get(s)) return plain(`${s} is not found`);
      return jsonSniffed(new GoMap({ sources, valid: true }));
    },
  },
  {
    method: "PUT",
    path: "/rules/{name}/reset_state",
    handler: async (ctx, e) => {
      const id = ctx.params.name!;
      const b = await readJson(ctx);
      if (!b.ok) return errorBody(ErrCode.undefined, b.error);
      if (!isObject(b.value)) return errorBody(ErrCode.undefined, unmarshalTypeError(b.value, "server.ruleStateUpdateRequest"));
      const type = field(b.value, "type");
      if (type !== 1) return errorBody(ErrCode.undefined, `unknown stateType:${typeof type === "number" ? type : 0}`);
      const lc = e.rules.get(id);
      if (!lc) return errorBody(ErrCode.undefined, `Rule ${id} is not found in registry`);
      if (!lc.running) return errorBody(ErrCode.undefined, `rule ${id} should be running when modify state`);
      const params = field(b.value, "params");
      const stream = isObject(params) ? String(field(params, "streamName") ?? "") : "";
      if (!ruleSources(lc.def).includes(stream)) return errorBody(ErrCode.undefined, `stream ${stream} not found in topo`);
      try {
        if (!lc.resetState(stream, isObject(params) ? field(params, "input") : undefined)) return errorBody(ErrCode.undefined, `source ${stream} is not rewindable`);
      } catch (err) {
        return errorBody(ErrCode.undefined, errorText(err));
      }
      return sentence("success");
    },
  },
  {
    method: "GET",
    path: "/rules/{name}/explain",
    handler: (ctx, e) => {
      try {
        return sentence(explain(e, ctx.params.name!));
      } catch (err) {
        return fromError(err, "explain rules error");
      }
    },
  },
  {
    method: "GET",
    path: "/rules/tags/match",
    handler: async (ctx, e) => {
      // Bun.serve drops the body of a GET request, so floe also takes `?tags=a,b` (docs/rest.md).
      const q = ctx.query.get("tags");
      const tags = q !== null ? q.split(",").filter((t) => t !== "") : await tagsBody(ctx);
      if (tags instanceof Response) return tags;
      const ids = e.rules.matchTags(tags);
      return json(ids.length ? { rules: ids } : {});
    },
  },
  ...([["PUT", "put"], ["PATCH", "add"], ["DELETE", "remove"]] as const).map(
    ([method, op]): R => ({
      method,
      path: "/rules/{name}/tags",
      handler: async (ctx, e) => {
        const tags = await tagsBody(ctx);
        if (tags instanceof Response) return tags;
        try {
          e.rules.setTags(ctx.params.name!, op, tags);
          return empty();
        } catch (err) {
          if (err instanceof EngineError && err.code === ErrCode.notFound) return fromError(err, "Get rule error");
          return errorBody(ErrCode.undefined, errorText(err), 500);
        }
      },
    }),
  ),
  {
    method: "GET",
    path: "/rules/{name}/scantables",
    handler: (ctx, e) => {
      const id = ctx.params.name!;
      const lc = e.rules.get(id);
      if (!lc) return errorBody(ErrCode.notFound, `Rule ${id} is not found`);
      const tables = lc.scanTables();
      if (!tables) return errorBody(ErrCode.undefined, `scan table error: join node is not found for ${id}`);
      // A table that has delivered no row yet has no tuples to show (eKuiper keys them by arrival).
      if (tables.some((t) => t.content.length === 0)) return errorBody(ErrCode.undefined, "scan table error: unable to find tuples for the given scan table");
      // One entry per retained row, as eKuiper lists its tuples.
      const rows: string[] = [];
      for (const t of tables) for (const row of t.content) rows.push(`{"emitter":${encodeGoJson(t.emitter)},"content":${encodeGoJson(row)}}`);
      return rawJson("[" + rows.join(",") + "]");
    },
  },
  { method: "POST", path: "/rules/bulkstart", handler: (ctx, e) => bulk(ctx, e, false) },
  { method: "POST", path: "/rules/bulkstop", handler: (ctx, e) => bulk(ctx, e, true) },
];
