/**
 * Connectivity checks (rest-api.md §13): `POST /metadata/{sources|sinks|lookups}/connection/{type}`
 * with connector props. The connectors that reach a server are pinged by their spec's check — mqtt
 * connects, sql runs `SELECT 1` — and a failure answers 400 in eKuiper's words, socket errors in
 * Go's (value/go-net-error.ts). The others cannot be pinged and answer eKuiper's
 * `<source|sink|lookup source> <type> doesn't support ping connection`.
 */
import { ErrCode } from "../errors.ts";
import type { Ping } from "../connectors/spec.ts";
import { isObject, readJson } from "./body.ts";
import type { Engine } from "./engine.ts";
import { empty, errorBody } from "./respond.ts";
import type { RouteDef } from "./router.ts";

export type CheckKind = "sources" | "sinks" | "lookups";

const NOUN: Record<CheckKind, string> = { sources: "source", sinks: "sink", lookups: "lookup source" };

/** The check routes; `known` tells the connector types of a kind that floe implements, `ping` their checks. */
export function connectivityRoutes(known: (kind: CheckKind, type: string) => boolean, ping: (kind: CheckKind, type: string) => Ping | undefined): RouteDef<Engine>[] {
  return (["sources", "sinks", "lookups"] as const).map((kind) => ({
    method: "POST",
    path: `/metadata/${kind}/connection/{name}`,
    handler: async (ctx) => {
      const type = ctx.params.name!;
      if (!known(kind, type)) return errorBody(ErrCode.confKey, `${NOUN[kind]} ${type} not found`);
      const check = ping(kind, type);
      if (!check) return errorBody(ErrCode.undefined, `${NOUN[kind]} ${type} doesn't support ping connection`);
      const b = await readJson(ctx);
      const failed = await check(b.ok && isObject(b.value) ? b.value : {});
      return failed ? errorBody(failed.code, failed.message) : empty();
    },
  }));
}
