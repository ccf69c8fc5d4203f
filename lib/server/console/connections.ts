/**
 * `GET /ui/api/connections`: every connection the engine holds, with its live status (connected,
 * connecting, disconnected) and the rules that use it. Named connections (`/connections`) come
 * from the connection registry; the clients a stream or an action opens for itself come from
 * the connection metrics of the rules' source and sink nodes: one entry per stream (all rules
 * reading it), one per action of a rule. A console route: its JSON is the console's own.
 */
import { CONNECTORS } from "../../connectors/index.ts";
import { rolesOf } from "../../connectors/spec.ts";
import { sourceType } from "../../connectors/sources.ts";
import type { Engine } from "../engine.ts";
import { json } from "../respond.ts";
import type { RouteDef } from "../router.ts";

/** Lowercased names of the roles whose node holds a client of a remote service (the spec's `remote`). */
function remoteTypes(kind: "sources" | "sinks"): Set<string> {
  const out = new Set<string>();
  for (const [name, r] of rolesOf(CONNECTORS, kind)) if (r.remote) out.add(name.toLowerCase());
  return out;
}

/** Source and sink types whose node holds a client of a remote service; the others (memory, file, log, …) report no real connection. */
const CLIENT_SOURCES = remoteTypes("sources");
const CLIENT_SINKS = remoteTypes("sinks");
const STATUS: Record<number, string> = { 1: "connected", 0: "connecting", [-1]: "disconnected" };

export interface ConnectionView {
  /** `connection <id>`, `stream <name>`, or `rule <id> action <type>_<i>`. */
  readonly name: string;
  readonly typ: string;
  /** Where it goes: the stream's DATASOURCE, an action's server or url (without user info); "" when not known. */
  readonly target: string;
  readonly status: string;
  /** The last disconnection's message, when disconnected or connecting. */
  readonly err: string;
  /** ms; 0 when never. */
  readonly lastConnected: number;
  readonly lastDisconnected: number;
  readonly rules: string[];
}

/** A URL without its user info (credentials). */
function withoutUser(u: unknown): string {
  if (typeof u !== "string") return "";
  return u.replace(/^([a-z][\w+.-]*:\/\/)[^@/]*@/i, "$1");
}

function worst(a: number, b: number): number {
  // disconnected < connecting < connected: a shared stream is as good as its worst reader.
  return Math.min(a, b);
}

export function connectionViews(e: Engine): ConnectionView[] {
  const out: ConnectionView[] = [];
  const ruleIds = [...e.rules.rules.keys()];
  // A node reference is `<ruleId>_<node>_<instance>`: the longest rule id it starts with.
  const ruleOf = (ref: string) => ruleIds.filter((r) => ref.startsWith(r + "_")).sort((a, b) => b.length - a.length)[0];
  for (const [full] of e.confKeys.entries()) {
    const [k, typ, ...rest] = full.split(".");
    if (k !== "connections" || !typ) continue;
    const id = rest.join(".");
    const st = e.connections.state(id);
    const rules = [...new Set(e.connections.refs(id).map(ruleOf).filter((r): r is string => r !== undefined))].sort();
    out.push({ name: `connection ${id}`, typ, target: "", status: st.status ?? "stored", err: st.err ?? "", lastConnected: 0, lastDisconnected: 0, rules });
  }
  const streams = new Map<string, { typ: string; target: string; status: number; err: string; lastConnected: number; lastDisconnected: number; rules: Set<string> }>();
  for (const [id, lc] of e.rules.rules) {
    if (!lc.running) continue;
    const nodes = lc.nodes();
    for (const n of nodes) {
      if (n.kind === "source") {
        const def = e.catalog.get(n.name);
        const typ = def ? sourceType(def) : "";
        if (!CLIENT_SOURCES.has(typ.toLowerCase())) continue;
        const s = streams.get(n.name);
        if (s) {
          s.status = worst(s.status, n.connectionStatus);
          if (n.lastDisconnectedTime > s.lastDisconnected) s.err = n.lastDisconnectedMessage;
          s.lastConnected = Math.max(s.lastConnected, n.lastConnectedTime);
          s.lastDisconnected = Math.max(s.lastDisconnected, n.lastDisconnectedTime);
          s.rules.add(id);
        } else
          streams.set(n.name, { typ, target: String(def?.options.DATASOURCE ?? ""), status: n.connectionStatus, err: n.lastDisconnectedMessage, lastConnected: n.lastConnectedTime, lastDisconnected: n.lastDisconnectedTime, rules: new Set([id]) });
      } else if (n.kind === "sink") {
        const m = /^(.+)_(\d+)$/.exec(n.name);
        if (!m || !CLIENT_SINKS.has(m[1]!.toLowerCase())) continue;
        const props = (lc.def.actions[Number(m[2])]?.[m[1]!] ?? {}) as Record<string, unknown>;
        out.push({
          name: `rule ${id} action ${n.name}`,
          typ: m[1]!,
          target: withoutUser(props.server ?? props.url ?? props.addr ?? props.topic ?? ""),
          status: STATUS[n.connectionStatus] ?? String(n.connectionStatus),
          err: n.connectionStatus === 1 ? "" : n.lastDisconnectedMessage,
          lastConnected: n.lastConnectedTime,
          lastDisconnected: n.lastDisconnectedTime,
          rules: [id],
        });
      }
    }
  }
  for (const [name, s] of streams)
    out.push({ name: `stream ${name}`, typ: s.typ, target: s.target, status: STATUS[s.status] ?? String(s.status), err: s.status === 1 ? "" : s.err, lastConnected: s.lastConnected, lastDisconnected: s.lastDisconnected, rules: [...s.rules].sort() });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export const connectionViewRoutes: RouteDef<Engine>[] = [{ method: "GET", path: "/ui/api/connections", handler: (_ctx, e) => json(connectionViews(e)) }];
