/**
 * The MQTT connectivity check (rest-api.md §13): connects a client with the props once (5 s); a
 * failure in paho's words.
 */
import { ErrCode, errorText } from "../../errors.ts";
import type { PingFailure } from "../spec.ts";
import type { MqttConnection } from "./client.ts";
import { parseMqttConf } from "./conf.ts";

const PROBE_MS = 5000;

/** Connects an MQTT client with `props` once (5 s); the client's error text (paho's words), or undefined. */
async function probeMqtt(props: Record<string, unknown>): Promise<string | undefined> {
  let conn: MqttConnection;
  // The MQTT client loads with the first MQTT connector, not with the daemon (memory).
  const { MqttConnection: Connection } = await import("./client.ts");
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

export async function pingMqtt(props: Record<string, unknown>): Promise<PingFailure | undefined> {
  const server = props.server;
  if (typeof server !== "string" || server === "") return { code: ErrCode.undefined, message: "missing server property" };
  const pv = props.protocolVersion;
  if (pv !== undefined && !["3.1", "3.1.1", "4", "5"].includes(String(pv))) return { code: ErrCode.undefined, message: `unsupported protocol version ${String(pv)}` };
  const err = await probeMqtt(props);
  return err ? { code: ErrCode.io, message: `found error when connecting for ${server}: ${err}` } : undefined;
}
