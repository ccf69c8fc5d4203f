/**
 * Connectivity checks (rest-api.md §13): `POST /metadata/{sources|sinks|lookups}/connection/{type}`
 * with connector props. The connectors that reach a server are pinged — mqtt connects, sql runs
 * `SELECT 1` — and a failure answers 400 in eKuiper's words, socket errors in Go's
 * (value/go-net-error.ts). The others cannot be pinged and answer eKuiper's
 * `<source|sink|lookup source> <type> doesn't support ping connection`.
 */
import { ErrCode, errorText } from "../errors.ts";
import type { MqttConnection } from "../connectors/mqtt/client.ts";
import { parseMqttConf } from "../connectors/mqtt/conf.ts";
import { openSql } from "../net/brokers.ts";
import type { DbUrl } from "../connectors/sql/db.ts";
import { goNetErrorText } from "../value/go-net-error.ts";
import { isObject, readJson } from "./body.ts";
import type { Engine } from "./engine.ts";
import { empty, errorBody } from "./respond.ts";
import type { RouteDef } from "./router.ts";

export type CheckKind = "sources" | "sinks" | "lookups";

/** A ping's failure as a 400 body, or undefined when the connector answered. */
type Ping = (props: Record<string, unknown>) => Promise<Response | undefined>;

const PROBE_MS = 5000;

/** Connects an MQTT client with `props` once (5 s); the client's error text (paho's words), or undefined. */
async function probeMqtt(props: Record<string, unknown>): Promise<string | undefined> {
  let conn: MqttConnection;
  // The MQTT client loads with the first MQTT connector, not with the daemon (memory).
  const { MqttConnection: Connection } = await import("../connectors/mqtt/client.ts");
  try {
    conn = new Connection({ conf: parseMqttConf(props, { defaultClientId: `floe-probe-${Date.now()}` }), log: () => {} });
  } catch (e) {
    return errorText(e);
  }
  // A close before the connect is a failure too: MQTT.js closes without an error when it will not
  // send the CONNECT (a password without a username), and the probe must not wait out its 5 s.
  const failed = new Promise<string>((r) => {
    conn.client.once("error", () => r("timeout"));
    conn.client.once("close", () => r("connection closed before the broker answered"));
  });
  const ok = await Promise.race<true | string>([conn.ready.then(() => true as const), Bun.sleep(PROBE_MS).then(() => "timeout"), failed]);
  await conn.close();
  return ok === true ? undefined : conn.lastError || ok;
}

const pingMqtt: Ping = async (props) => {
  const server = props.server;
  if (typeof server !== "string" || server === "") return errorBody(ErrCode.undefined, "missing server property");
  const pv = props.protocolVersion;
  if (pv !== undefined && !["3.1", "3.1.1", "4", "5"].includes(String(pv))) return errorBody(ErrCode.undefined, `unsupported protocol version ${String(pv)}`);
  const err = await probeMqtt(props);
  return err ? errorBody(ErrCode.io, `found error when connecting for ${server}: ${err}`) : undefined;
};

const pingSql: Ping = async (props) => {
  // The SQL client loads with the first sql connector or check, not with the daemon (memory).
  const { dbUrlProp, parseDbUrl } = await import("../connectors/sql/db.ts");
  let url: DbUrl;
  try {
    url = parseDbUrl(dbUrlProp(props));
  } catch (e) {
    return errorBody(ErrCode.undefined, errorText(e));
  }
  const db = openSql(url.options);
  const target = url.dialect === "sqlite" ? undefined : new URL(String(url.options.url));
  try {
    const answered = await Promise.race([db.unsafe("SELECT 1").then(() => true), Bun.sleep(PROBE_MS).then(() => false)]);
    return answered ? undefined : errorBody(ErrCode.io, `${url.display}: i/o timeout`);
  } catch (e) {
    const port = Number(target?.port) || (url.dialect === "postgres" ? 5432 : 3306);
    return errorBody(ErrCode.io, (target && goNetErrorText(e, { host: target.hostname, port })) || errorText(e));
  } finally {
    await db.close({ timeout: 0 }).catch(() => {});
  }
};

/** What each kind can ping, by connector type. */
const PINGS: Record<CheckKind, Record<string, Ping>> = {
  sources: { mqtt: pingMqtt, sql: pingSql },
  sinks: { mqtt: pingMqtt, sql: pingSql },
  lookups: { sql: pingSql },
};

const NOUN: Record<CheckKind, string> = { sources: "source", sinks: "sink", lookups: "lookup source" };

/** The check routes; `known` tells the connector types of a kind that floe implements. */
export function connectivityRoutes(known: (kind: CheckKind, type: string) => boolean): RouteDef<Engine>[] {
  return (["sources", "sinks", "lookups"] as const).map((kind) => ({
    method: "POST",
    path: `/metadata/${kind}/connection/{name}`,
    handler: async (ctx) => {
      const type = ctx.params.name!;
      if (!known(kind, type)) return errorBody(ErrCode.confKey, `${NOUN[kind]} ${type} not found`);
      const ping = PINGS[kind][type];
      if (!ping) return errorBody(ErrCode.undefined, `${NOUN[kind]} ${type} doesn't support ping connection`);
      const b = await readJson(ctx);
      return (await ping(b.ok && isObject(b.value) ? b.value : {})) ?? empty();
    },
  }));
}
