/**
 * `/metadata/**` (rest-api.md §13): connector and function metadata for UIs, confKeys (secrets
 * masked on the way out, kept on the way in when sent back masked), resources and connectivity
 * tests. Connector metadata is generated from the connector specs (connectors/index.ts): their
 * roles, shipped confKey defaults and sink properties.
 */
import { CONNECTORS } from "../connectors/index.ts";
import { metadataNames, rolesOf, type ConnectorSpec, type Ping } from "../connectors/spec.ts";
import { ErrCode } from "../errors.ts";
import { FUNCTION_DOCS, FUNCTION_GROUP_PAGES, type FunctionDoc } from "../functions/docs.ts";
import type { FunctionRegistry } from "../functions/registry.ts";
import { idError } from "../store/ids.ts";
import { isObject, readJson } from "./body.ts";
import { maskSecrets, type ConfKind } from "./confkeys.ts";
import { connectivityRoutes, type CheckKind } from "./connectivity.ts";
import type { Engine } from "./engine.ts";
import { empty, errorBody, GoMap, json, jsonSniffed } from "./respond.ts";
import type { Ctx, RouteDef } from "./router.ts";

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

type Meta = Record<string, unknown>;

/** What /metadata says about the connectors of a list of specs, and which of them it can ping. */
interface ConnectorMetadata {
  source(type: string): Meta | undefined;
  sink(type: string): Meta | undefined;
  connection(type: string): Meta | undefined;
  /** The listed names: sources, lookup sources, sinks, connection types. */
  readonly lists: { readonly sources: string[]; readonly lookups: string[]; readonly sinks: string[]; readonly connections: string[] };
  /** Whether a connectivity check knows the type of its kind. */
  known(kind: CheckKind, type: string): boolean;
  /** The connector's connectivity check, by its exact name. */
  ping(kind: CheckKind, type: string): Ping | undefined;
}

/**
 * The metadata of the connectors floe implements: `neuron` and `nexmark` of eKuiper's default build
 * are not (rules-and-sinks.md preamble), so no metadata claims them; floe's own (`nats`, `stdout`)
 * are not listed (connectors/spec.ts `Listing`).
 */
function connectorMetadata(specs: readonly ConnectorSpec[]): ConnectorMetadata {
  const sources = rolesOf(specs, "sources");
  const lookups = rolesOf(specs, "lookups");
  const sinks = rolesOf(specs, "sinks");
  const connections = rolesOf(specs, "connections");
  const shipped = new Map<string, Record<string, unknown>>();
  for (const s of specs) for (const [name, doc] of Object.entries(s.confKeys ?? {})) shipped.set(name, (doc.default ?? {}) as Record<string, unknown>);
  // Answered by name: every source with metadata and every lookup source (its confKeys are a source's).
  const sourceNames = [...metadataNames(sources, false), ...metadataNames(lookups, false).filter((n) => !sources.has(n))];
  const sinkNames = metadataNames(sinks, false);
  const lookupNames = new Set(metadataNames(lookups, false));
  const byLower = (names: readonly string[], type: string) => names.find((n) => n.toLowerCase() === type.toLowerCase());
  const pings: Record<CheckKind, Map<string, Ping>> = { sources: new Map(), sinks: new Map(), lookups: new Map() };
  for (const [kind, roles] of [["sources", sources], ["sinks", sinks], ["lookups", lookups]] as const)
    for (const [name, r] of roles) if (r.ping) pings[kind].set(name, r.ping);
  const source = (type: string): Meta | undefined => {
    const name = byLower(sourceNames, type);
    if (!name) return undefined;
    // Fields are marked connection-related only when asked in the connector's own spelling.
    const related = type === name ? (sources.get(name)?.connectionProps ?? []) : [];
    return {
      about: ABOUT(name, "sources"),
      libs: [],
      properties: { default: Object.entries(shipped.get(name) ?? {}).map(([k, v]) => fieldOf(k, v, related.includes(k))) },
      node: { category: "source", icon: `iconPath`, label: { en: name, zh: name } },
      type: "internal",
    };
  };
  const sink = (type: string): Meta | undefined => {
    const name = byLower(sinkNames, type);
    if (!name) return undefined;
    return {
      about: ABOUT(name, "sinks"),
      libs: [],
      properties: Object.entries(sinks.get(name)!.props ?? {}).map(([k, v]) => fieldOf(k, v)),
      node: { category: "sink", icon: "iconPath", label: { en: name, zh: name } },
      type: "internal",
    };
  };
  const connection = (type: string): Meta | undefined => {
    const role = connections.get(type);
    if (!role) return undefined;
    const props = role.props ?? {};
    return { about: ABOUT(type, "connections"), libs: [], properties: Object.entries(props).map(([k, v]) => fieldOf(k, v, true)), node: { category: "connection", icon: "iconPath", label: { en: type, zh: type } }, type: "internal" };
  };
  return {
    source,
    sink,
    connection,
    lists: { sources: metadataNames(sources, true), lookups: metadataNames(lookups, true), sinks: metadataNames(sinks, true), connections: metadataNames(connections, true) },
    known: (kind, type) => (kind === "sinks" ? !!sink(type) : kind === "lookups" ? lookupNames.has(type) : !!source(type)),
    ping: (kind, type) => pings[kind].get(type),
  };
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

function confKeyRoutes(kind: ConfKind, meta: ConnectorMetadata): RouteDef<Engine>[] {
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
        if (kind === "sources" && !meta.source(type)) return errorBody(ErrCode.confKey, `source ${type} not found`);
        if (kind === "sinks" && !meta.sink(type)) return errorBody(ErrCode.confKey, `sink ${type} not found`);
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

/** The `/metadata` routes for the connectors of `specs` (the daemon's: `metadataRoutes`). */
export function createMetadataRoutes(specs: readonly ConnectorSpec[]): RouteDef<Engine>[] {
  const meta = connectorMetadata(specs);
  const named = (names: readonly string[], kind: string) => list(names.map((t) => ({ name: t, about: ABOUT(t, kind), type: "internal" })));
  return [
    { method: "GET", path: "/metadata/functions", handler: (_ctx, e) => json(functionsMeta(e.functions)) },
    { method: "GET", path: "/metadata/operators", handler: () => json([]) },
    { method: "GET", path: "/metadata/sinks", handler: () => named(meta.lists.sinks, "sinks") },
    { method: "GET", path: "/metadata/sinks/{name}", handler: (ctx) => { const m = meta.sink(ctx.params.name!); return m ? json(m) : metaError(ctx, "notFound", ctx.params.name!); } },
    {
      method: "GET",
      path: "/metadata/sources",
      handler: (ctx) => {
        const lookup = (ctx.query.get("kind") ?? "").toLowerCase() === "lookup";
        return named(lookup ? meta.lists.lookups : meta.lists.sources, "sources");
      },
    },
    { method: "GET", path: "/metadata/sources/{name}", handler: (ctx) => { const m = meta.source(ctx.params.name!); return m ? json(m) : metaError(ctx, "notFound", ctx.params.name!); } },
    yamlRoute("sources"),
    ...confKeyRoutes("sources", meta),
    yamlRoute("sinks"),
    ...confKeyRoutes("sinks", meta),
    { method: "GET", path: "/metadata/connections", handler: () => named(meta.lists.connections, "connections") },
    { method: "GET", path: "/metadata/connections/{name}", handler: (ctx) => { const m = meta.connection(ctx.params.name!); return m ? json(m) : metaError(ctx, "notFound", ctx.params.name!); } },
    yamlRoute("connections"),
    ...confKeyRoutes("connections", meta),
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
    ...connectivityRoutes(meta.known, meta.ping),
  ];
}

export const metadataRoutes: RouteDef<Engine>[] = createMetadataRoutes(CONNECTORS);
