/**
 * `/metadata/**` (rest-api.md §13): connector and function metadata for UIs, confKeys (secrets
 * masked on the way out, kept on the way in when sent back masked), resources and connectivity
 * tests. Connector metadata is generated from the shipped confKey defaults and the sink list.
 */
import { SHIPPED_SOURCES } from "../config/index.ts";
import { ErrCode } from "../errors.ts";
import { FUNCTION_DOCS, FUNCTION_GROUP_PAGES, type FunctionDoc } from "../functions/docs.ts";
import type { FunctionRegistry } from "../functions/registry.ts";
import { idError } from "../store/ids.ts";
import { isObject, readJson } from "./body.ts";
import { maskSecrets, type ConfKind } from "./confkeys.ts";
import { CONNECTION_TYPES } from "./connections.ts";
import { connectivityRoutes } from "./connectivity.ts";
import type { Engine } from "./engine.ts";
import { empty, errorBody, GoMap, json, jsonSniffed } from "./respond.ts";
import type { Ctx, RouteDef } from "./router.ts";
import { SINK_TYPES as CONNECTOR_SINKS } from "../connectors/sinks.ts";

/**
 * The connectors of eKuiper's default build that floe implements (rules-and-sinks.md preamble):
 * `neuron` and `nexmark` are not, so no metadata claims them; floe's own `stdout` and `nats` are not listed.
 */
const SOURCE_TYPES = new Set(["file", "httppull", "httppush", "memory", "mqtt", "redisSub", "simulator", "sql", "websocket"]);
const LOOKUP_SOURCES = new Set(["memory", "httppull", "simulator", "redis", "sql"]);
const SINK_TYPES = CONNECTOR_SINKS.filter((t) => t !== "stdout" && t !== "nats");

const MESSAGES: Record<string, string> = {
  notFound: "This plugin was not found:",
  confKeyNotFound: "This confkey was not found:",
  typeConversion: "Type conversion failed:",
  writeFailed: "Failed to write data to file:",
};

/** A localised metadata error: text by `Content-Language` (unknown language → name only). */
function metaError(ctx: Ctx, key: keyof typeof MESSAGES, tail: string): Response {
  const lang = (ctx.headers.get("Content-Language") ?? "en_US").replace(/-/g, "_");
  const text = lang === "en_US" || lang === "zh_CN" ? MESSAGES[key]! : "";
  return errorBody(ErrCode.confKey, text + tail);
}

const ABOUT = (name: string, kind: string) => ({
  trial: false,
  installed: true,
  author: { name: "floe", email: "", company: "", website: "" },
  helpUrl: { en: `https://ekuiper.org/docs/en/latest/guide/${kind}/builtin/${name}.html`, zh: `https://ekuiper.org/docs/zh/latest/guide/${kind}/builtin/${name}.html` },
  description: { en: `The ${name} ${kind.replace(/s$/, "")}`, zh: `${name}` },
});

function fieldOf(name: string, dflt: unknown, connection = false): Record<string, unknown> {
  const type = Array.isArray(dflt) ? "list_object" : typeof dflt === "number" ? "int" : typeof dflt === "boolean" ? "bool" : typeof dflt === "object" && dflt ? "object" : "string";
  return {
    exist: false,
    name,
    default: dflt ?? "",
    type,
    control: type === "bool" ? "radio" : type === "list_object" || type === "object" ? "list" : "text",
    connection_related: connection,
    optional: true,
    values: null,
    hint: { en: name, zh: name },
    label: { en: name, zh: name },
  };
}

const SINK_PROPS: Record<string, Record<string, unknown>> = {
  mqtt: { server: "tcp://127.0.0.1:1883", topic: "", qos: 0, retained: false, clientId: "", username: "", password: "", protocolVersion: "3.1.1" },
  rest: { url: "", method: "POST", bodyType: "json", timeout: 5000, headers: {} },
  file: { path: "", fileType: "lines", interval: 1000, hasHeader: false, delimiter: ",", format: "json" },
  memory: { topic: "" },
  log: {},
  logToMemory: {},
  nop: { log: false },
  redis: { addr: "127.0.0.1:6379", password: "", db: 0, key: "", field: "", dataType: "string", expiration: -1 },
  redisPub: { address: "127.0.0.1:6379", password: "", db: 0, channel: "" },
  websocket: { addr: "", path: "", scheme: "ws" },
  sse: { endpoint: "" },
  sql: { dburl: "", table: "", fields: [], rowKindField: "", keyField: "" },
};

function sourceMeta(type: string): Record<string, unknown> | undefined {
  const s = Object.entries(SHIPPED_SOURCES).find(([k]) => k.toLowerCase() === type.toLowerCase());
  // floe's own `nats` is not listed, but its confKeys are managed like any source's.
  if (!s || !(SOURCE_TYPES.has(s[0]) || LOOKUP_SOURCES.has(s[0]) || s[0] === "nats")) return undefined;
  const dflt = (s[1].default ?? {}) as Record<string, unknown>;
  return {
    about: ABOUT(s[0], "sources"),
    libs: [],
    properties: { default: Object.entries(dflt).map(([k, v]) => fieldOf(k, v, type === "mqtt" && k !== "qos")) },
    node: { category: "source", icon: `iconPath`, label: { en: s[0], zh: s[0] } },
    type: "internal",
  };
}

function sinkMeta(type: string): Record<string, unknown> | undefined {
  const t = SINK_TYPES.find((x) => x.toLowerCase() === type.toLowerCase());
  if (!t) return undefined;
  return {
    about: ABOUT(t, "sinks"),
    libs: [],
    properties: Object.entries(SINK_PROPS[t] ?? {}).map(([k, v]) => fieldOf(k, v)),
    node: { category: "sink", icon: "iconPath", label: { en: t, zh: t } },
    type: "internal",
  };
}

function connectionMeta(type: string): Record<string, unknown> | undefined {
  if (!CONNECTION_TYPES.includes(type)) return undefined;
  const props = type === "mqtt" ? ((SHIPPED_SOURCES.mqtt!.default ?? {}) as Record<string, unknown>) : {};
  return { about: ABOUT(type, "connections"), libs: [], properties: Object.entries(props).map(([k, v]) => fieldOf(k, v, true)), node: { category: "connection", icon: "iconPath", label: { en: type, zh: type } }, type: "internal" };
}

/** A list answer; an empty list is an empty body [quirk]. */
function list(items: { name: string; about: unknown; type: string }[]): Response {
  if (items.length === 0) return new Response("", { status: 200, headers: { "Content-Type": "application/json" } });
  return json(items.sort((a, b) => (a.name < b.name ? -1 : 1)));
}

const FUNCTIONS_DOCS = "https://ekuiper.org/docs/%s/latest/sqls/functions/";

/** One function in eKuiper's metadata shape: example, hint, arguments, outputs, node. */
function functionMeta(name: string, doc: FunctionDoc | undefined): Record<string, unknown> {
  const args = (doc?.args ?? []).map((a) => {
    const optional = a.endsWith("?");
    return { name: optional ? a.slice(0, -1) : a, hidden: false, optional, control: "field", type: "field", values: [] };
  });
  const hint = doc?.hint ?? "";
  return {
    name,
    example: `${name}(${args.map((a) => a.name).join(", ")})`,
    hint: { en_US: hint, zh_CN: hint },
    args,
    outputs: [{ label: { en_US: "Output", zh_CN: "输出" }, value: name }],
    node: { category: "function", icon: "iconPath", label: { en: name.toUpperCase(), zh: name.toUpperCase() } },
  };
}

/** The built-in functions by functions.md group (internals left out), then JavaScript UDFs by plugin. */
function functionsMeta(functions: FunctionRegistry): unknown[] {
  const groups = new Map<string, unknown[]>();
  for (const g of Object.keys(FUNCTION_GROUP_PAGES)) groups.set(g, []);
  for (const n of functions.names().sort()) {
    const d = functions.lookup(n)!;
    const doc = d.plugin ? undefined : FUNCTION_DOCS[n];
    const g = d.plugin ? `${d.plugin} functions` : (doc?.group ?? "other");
    if (g === "incremental internals") continue;
    let list = groups.get(g);
    if (!list) groups.set(g, (list = []));
    list.push(functionMeta(n, doc));
  }
  const out: unknown[] = [];
  for (const [name, functions] of groups) {
    if (functions.length === 0) continue;
    const page = FUNCTION_GROUP_PAGES[name];
    const about = ABOUT(name, "functions");
    // eKuiper's function pages: one per group; plugin functions point at the UDF guide.
    about.helpUrl = page
      ? { en: FUNCTIONS_DOCS.replace("%s", "en") + page + ".html", zh: FUNCTIONS_DOCS.replace("%s", "zh") + page + ".html" }
      : { en: "https://ekuiper.org/docs/en/latest/guide/functions/overview.html", zh: "https://ekuiper.org/docs/zh/latest/guide/functions/overview.html" };
    out.push({ about, name, functions });
  }
  return out;
}

function yamlRoute(kind: ConfKind): RouteDef<Engine> {
  return {
    method: "GET",
    path: `/metadata/${kind}/yaml/{name}`,
    handler: (ctx, e) => {
      const type = ctx.params.name!;
      const all = e.confKeys.all(kind, type);
      if (!all) return metaError(ctx, "notFound", `${kind}.${type}`);
      return json(new GoMap(maskSecrets(all)));
    },
  };
}

function confKeyRoutes(kind: ConfKind): RouteDef<Engine>[] {
  return [
    {
      method: "DELETE",
      path: `/metadata/${kind}/{name}/confKeys/{confKey}`,
      handler: async (ctx, e) => {
        const ie = idError(ctx.params.confKey!);
        if (ie) return errorBody(ErrCode.undefined, `Invalid confKey: ${ie}`);
        e.confKeys.delete(kind, ctx.params.name!, ctx.params.confKey!);
        if (kind === "connections") await e.connections.close(ctx.params.confKey!);
        return empty();
      },
    },
    {
      method: "PUT",
      path: `/metadata/${kind}/{name}/confKeys/{confKey}`,
      handler: async (ctx, e) => {
        const type = ctx.params.name!;
        const key = ctx.params.confKey!;
        const ie = idError(key);
        if (ie) return errorBody(ErrCode.undefined, `Invalid confKey: ${ie}`);
        const b = await readJson(ctx);
        if (!b.ok || !isObject(b.value)) return metaError(ctx, "typeConversion", `${type}.${b.ok ? "json: cannot unmarshal into map[string]interface {}" : b.error}`);
        if (kind === "sources" && !sourceMeta(type)) return errorBody(ErrCode.confKey, `source ${type} not found`);
        if (kind === "sinks" && !sinkMeta(type)) return errorBody(ErrCode.confKey, `sink ${type} not found`);
        // A confKey selecting a named connection takes the server from that connection.
        const selects = typeof b.value.connectionSelector === "string" && b.value.connectionSelector !== "";
        if (kind !== "connections" && type === "mqtt" && !selects && (typeof b.value.server !== "string" || b.value.server === "")) return errorBody(ErrCode.undefined, "missing server property");
        e.confKeys.put(kind, type, key, b.value);
        if (kind === "connections") e.connections.open(key, type, e.confKeys.stored("connections", type)[key] ?? b.value);
        return empty();
      },
    },
  ];
}

export const metadataRoutes: RouteDef<Engine>[] = [
  { method: "GET", path: "/metadata/functions", handler: (_ctx, e) => json(functionsMeta(e.functions)) },
  { method: "GET", path: "/metadata/operators", handler: () => json([]) },
  { method: "GET", path: "/metadata/sinks", handler: () => list(SINK_TYPES.map((t) => ({ name: t, about: ABOUT(t, "sinks"), type: "internal" }))) },
  { method: "GET", path: "/metadata/sinks/{name}", handler: (ctx) => { const m = sinkMeta(ctx.params.name!); return m ? json(m) : metaError(ctx, "notFound", ctx.params.name!); } },
  {
    method: "GET",
    path: "/metadata/sources",
    handler: (ctx, e) => {
      const lookup = (ctx.query.get("kind") ?? "").toLowerCase() === "lookup";
      const types = Object.keys(SHIPPED_SOURCES).filter((t) => (lookup ? LOOKUP_SOURCES : SOURCE_TYPES).has(t));
      void e;
      return list(types.map((t) => ({ name: t, about: ABOUT(t, "sources"), type: "internal" })));
    },
  },
  { method: "GET", path: "/metadata/sources/{name}", handler: (ctx) => { const m = sourceMeta(ctx.params.name!); return m ? json(m) : metaError(ctx, "notFound", ctx.params.name!); } },
  yamlRoute("sources"),
  ...confKeyRoutes("sources"),
  yamlRoute("sinks"),
  ...confKeyRoutes("sinks"),
  { method: "GET", path: "/metadata/connections", handler: () => list(CONNECTION_TYPES.filter((t) => t !== "nats").map((t) => ({ name: t, about: ABOUT(t, "connections"), type: "internal" }))) },
  { method: "GET", path: "/metadata/connections/{name}", handler: (ctx) => { const m = connectionMeta(ctx.params.name!); return m ? json(m) : metaError(ctx, "notFound", ctx.params.name!); } },
  yamlRoute("connections"),
  ...confKeyRoutes("connections"),
  {
    method: "GET",
    path: "/metadata/resource",
    handler: (ctx, e) => {
      const st = ctx.query.get("sourceType");
      const out: Record<string, unknown> = {};
      for (const type of e.confKeys.sourceTypes()) {
        const all = e.confKeys.all("sources", type) ?? {};
        const keep: Record<string, unknown> = {};
        for (const [k, p] of Object.entries(all)) if (!st || p.sourceType === st) keep[k] = p;
        if (Object.keys(keep).length) out[type] = keep;
      }
      return jsonSniffed(new GoMap(maskSecrets(out)));
    },
  },
  {
    method: "GET",
    path: "/metadata/resources",
    handler: (_c, e) => {
      const part = (kind: ConfKind) =>
        e.confKeys.storedTypes(kind).map((t) => Object.fromEntries(Object.keys(e.confKeys.stored(kind, t)).map((k) => [k, t])));
      return jsonSniffed({ sinks: part("sinks"), sources: part("sources") });
    },
  },
  ...connectivityRoutes((kind, type) => (kind === "sinks" ? !!sinkMeta(type) : kind === "lookups" ? LOOKUP_SOURCES.has(type) : !!sourceMeta(type))),
];
