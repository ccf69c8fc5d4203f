/**
 * Named connections (rest-api.md §12), stored as `connections.<typ>.<id>` confKeys and shared by
 * rules through `connectionSelector`. Status and references come from the runtime's connection
 * registry (the live clients); props are listed with secrets masked.
 */
import { CONNECTORS } from "../connectors/index.ts";
import { rolesOf } from "../connectors/spec.ts";
import { ErrCode } from "../errors.ts";
import { idError } from "../store/ids.ts";
import { field, isObject, parseBool, readJson } from "./body.ts";
import { maskSecrets, unmaskSecrets } from "./confkeys.ts";
import type { Engine } from "./engine.ts";
import { errorBody, json, jsonSniffed, sentence } from "./respond.ts";
import type { RouteDef } from "./router.ts";

/**
 * The connection types of the connector specs: eKuiper's that floe has connectors for (`nng` has
 * none: `unknown connection type`), and floe's `nats`. Only mqtt and nats connections are live
 * clients; the others hold props that the nodes selecting them merge over their own
 * (rules-and-sinks.md §3, §8).
 */
const CONNECTION_ROLES = rolesOf(CONNECTORS, "connections");

interface Conn {
  id: string;
  typ: string;
  props: Record<string, unknown>;
}

function all(e: Engine): Conn[] {
  const out: Conn[] = [];
  for (const [full, props] of e.confKeys.entries()) {
    const [k, typ, ...rest] = full.split(".");
    if (k === "connections" && typ) out.push({ id: rest.join("."), typ, props });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function find(e: Engine, id: string): Conn | undefined {
  return all(e).find((c) => c.id === id);
}

/** The rule nodes attached to this connection, `<ruleId>_<node>_<instance>` (rest-api.md §12). */
function references(e: Engine, id: string): string[] {
  return e.connections.refs(id);
}

function view(e: Engine, c: Conn): Record<string, unknown> {
  const refs = references(e, c.id).length;
  return { id: c.id, typ: c.typ, props: maskSecrets(c.props), isNamed: true, ...e.connections.state(c.id), ...(refs ? { refCount: refs } : {}) };
}

function validateProps(typ: string, props: Record<string, unknown>): string | undefined {
  const role = CONNECTION_ROLES.get(typ);
  if (!role) return "unknown connection type";
  return role.validate?.(props);
}

export const connectionRoutes: RouteDef<Engine>[] = [
  { method: "GET", path: "/connections", handler: (ctx, e) => (void parseBool(ctx.query.get("forceAll")), jsonSniffed(all(e).map((c) => view(e, c)))) },
  {
    method: "POST",
    path: "/connections",
    handler: async (ctx, e) => {
      const b = await readJson(ctx);
      if (!b.ok) return errorBody(ErrCode.undefined, `Invalid body: ${b.error}`);
      const o = isObject(b.value) ? b.value : {};
      const id = String(field(o, "id") ?? "");
      const typ = String(field(o, "typ") ?? "");
      const props = isObject(field(o, "props")) ? (field(o, "props") as Record<string, unknown>) : {};
      const ie = id === "" ? undefined : idError(id);
      if (ie) return errorBody(ErrCode.undefined, ie);
      if (id === "" || typ === "") return errorBody(ErrCode.undefined, "create connection failed: connection id and type should be defined");
      if (find(e, id)) return errorBody(ErrCode.undefined, `create connection failed: connection ${id} already been created`);
      const bad = validateProps(typ, props);
      if (bad) return errorBody(ErrCode.undefined, `create connection failed: ${bad}`);
      e.confKeys.put("connections", typ, id, props);
      e.connections.open(id, typ, props);
      return sentence("success", 201);
    },
  },
  {
    method: "GET",
    path: "/connections/{id}",
    handler: (ctx, e) => {
      const c = find(e, ctx.params.id!);
      if (!c) return errorBody(ErrCode.undefined, `connection ${ctx.params.id} not existed`);
      return json(view(e, c));
    },
  },
  {
    method: "DELETE",
    path: "/connections/{id}",
    handler: async (ctx, e) => {
      const id = ctx.params.id!;
      const c = find(e, id);
      if (!c) return sentence("success");
      const refs = references(e, id);
      if (refs.length) return errorBody(ErrCode.undefined, `drop connection failed: connection ${id} can't be dropped due to rule references [${refs.join(" ")}]`);
      e.confKeys.delete("connections", c.typ, id);
      await e.connections.close(id);
      return sentence("success");
    },
  },
  {
    method: "PUT",
    path: "/connections/{id}",
    handler: async (ctx, e) => {
      const id = ctx.params.id!;
      const b = await readJson(ctx);
      if (!b.ok) return errorBody(ErrCode.undefined, `Invalid body: ${b.error}`);
      const o = isObject(b.value) ? b.value : {};
      const typ = String(field(o, "typ") ?? "");
      const props = isObject(field(o, "props")) ? (field(o, "props") as Record<string, unknown>) : {};
      if (typ === "") return errorBody(ErrCode.undefined, "update connection failed: connection id and type should be defined");
      const c = find(e, id);
      if (!c) return errorBody(ErrCode.undefined, `update connection failed: connection ${id} not existed`);
      const refs = references(e, id);
      if (refs.length) return errorBody(ErrCode.undefined, `update connection failed: connection ${id} can't be dropped due to rule references [${refs.join(" ")}]`);
      const bad = validateProps(typ, props);
      if (bad) return errorBody(ErrCode.undefined, `update connection failed: ${bad}`);
      const merged = unmaskSecrets(props, c.props);
      e.kv.transaction(() => {
        e.confKeys.delete("connections", c.typ, id);
        e.confKeys.put("connections", typ, id, merged);
      });
      e.connections.open(id, typ, merged);
      return sentence("success");
    },
  },
];
