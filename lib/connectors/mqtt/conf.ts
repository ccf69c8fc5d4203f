/**
 * MQTT connection properties (rules-and-sinks.md §9) → MQTT.js options: server URL schemes,
 * protocol versions, client id, credentials, persistent sessions, TLS files or raw PEM, and
 * eKuiper's keep-alive and timeout choices.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { IClientOptions } from "mqtt";
import { EngineError, ErrCode } from "../../errors.ts";
import { PropReader, type Props } from "../../config/props.ts";

export interface MqttConf {
  /** MQTT.js URL: mqtt://, mqtts://, ws://, wss:// */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly ws: boolean;
  readonly protocolVersion: 3 | 4 | 5;
  readonly clientId: string;
  readonly clean: boolean;
  readonly options: IClientOptions;
}

const PROTOCOLS: Record<string, 3 | 4 | 5> = { "3.1": 3, "3.1.1": 4, "4": 4, "5": 5 };
const TLS_VERSIONS: Record<string, "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3"> = {
  "tls1.0": "TLSv1",
  "tls1.1": "TLSv1.1",
  "tls1.2": "TLSv1.2",
  "tls1.3": "TLSv1.3",
};

/** Reads a TLS file relative to the installation base (config-and-cli.md §1). */
function readPem(path: string, base: string): Buffer {
  return readFileSync(isAbsolute(path) ? path : join(base, path));
}

/** Parses connection properties; throws EngineError with eKuiper's texts. */
export function parseMqttConf(props: Props, opts: { base?: string; defaultClientId?: string } = {}): MqttConf {
  const r = new PropReader(props);
  const server = r.str("server");
  if (!server) throw new EngineError("missing server property", ErrCode.general);
  const pvRaw = r.raw("protocolVersion");
  const pv = pvRaw === undefined || pvRaw === null || pvRaw === "" ? "3.1.1" : String(pvRaw);
  const protocolVersion = PROTOCOLS[pv];
  if (!protocolVersion) throw new EngineError(`unsupported protocol version ${pv}`);
  const tlsConf = r.str("tls");
  if (tlsConf && tlsConf !== "default") throw new EngineError(`unknown tls configuration type: ${tlsConf}`);
  let u: URL;
  try {
    u = new URL(server);
  } catch {
    throw new EngineError(`invalid server url ${server}`);
  }
  const scheme = u.protocol.replace(/:$/, "").toLowerCase();
  const base = opts.base ?? process.cwd();
  const tlsFiles = {
    cert: r.str("certificationPath"),
    key: r.str("privateKeyPath"),
    ca: r.str("rootCaPath"),
    certRaw: r.str("certificationRaw"),
    keyRaw: r.str("privateKeyRaw"),
    caRaw: r.str("rootCARaw"),
  };
  const insecure = r.bool("insecureSkipVerify");
  const anyTls = Object.values(tlsFiles).some((x) => x) || insecure || !!tlsConf;
  const secureScheme = scheme === "ssl" || scheme === "tls" || scheme === "mqtts" || scheme === "tcps";
  const ws = scheme === "ws" || scheme === "wss";
  const tls = secureScheme || scheme === "wss" || (anyTls && !ws && scheme !== "tcp" && scheme !== "mqtt");
  const mqttScheme = ws ? scheme : tls ? "mqtts" : "mqtt";
  const defPort = ws ? (scheme === "wss" ? 443 : 80) : tls ? 8883 : 1883;
  const port = u.port ? Number(u.port) : defPort;
  const url = `${mqttScheme}://${u.hostname}:${port}${ws ? u.pathname || "/mqtt" : ""}`;
  const clientId = r.str("clientid") || opts.defaultClientId || crypto.randomUUID();
  const session = r.bool("enableClientSession");
  const options: IClientOptions = {
    protocolVersion,
    clientId,
    clean: !session,
    // eKuiper: v5 keep-alive 20 s, v3/v4 30 s; 5 s operation timeout.
    keepalive: protocolVersion === 5 ? 20 : 30,
    connectTimeout: 5000,
    reconnectPeriod: 100,
    resubscribe: true,
    queueQoSZero: false,
    // MQTT.js would pre-build 65,536 two-byte Buffers for packet ids at its first write (mqtt-packet's
    // number cache: ~3.4 MiB of heap in every process with a connection); built per write instead.
    writeCache: false,
    username: r.str("username") || undefined,
    password: r.str("password") || undefined,
  };
  if (protocolVersion === 3) options.protocolId = "MQIsdp";
  if (protocolVersion === 5) {
    // floe's own property: how many QoS 1/2 publishes the broker may have in flight to this client.
    // The MQTT maximum by default, so a v5 broker never parks a burst in its bounded queue.
    const rm = r.int("receiveMaximum", 65535);
    if (rm < 1 || rm > 65535) throw new EngineError(`invalid receiveMaximum ${rm}, the value could be only int 1 to 65535`);
    options.properties = { receiveMaximum: rm };
    if (session) options.properties.sessionExpiryInterval = r.int("sessionExpiryIntervalSeconds", 60, "uint32");
  }
  if (tls) {
    options.rejectUnauthorized = !insecure;
    if (tlsFiles.cert) options.cert = readPem(tlsFiles.cert, base);
    else if (tlsFiles.certRaw) options.cert = Buffer.from(tlsFiles.certRaw, "base64");
    if (tlsFiles.key) options.key = readPem(tlsFiles.key, base);
    else if (tlsFiles.keyRaw) options.key = Buffer.from(tlsFiles.keyRaw, "base64");
    if (tlsFiles.ca) options.ca = readPem(tlsFiles.ca, base);
    else if (tlsFiles.caRaw) options.ca = Buffer.from(tlsFiles.caRaw, "base64");
    const minV = TLS_VERSIONS[r.str("tlsMinVersion", "tls1.2").toLowerCase()] ?? "TLSv1.2";
    (options as IClientOptions & { minVersion?: string }).minVersion = minV;
  }
  return { url, host: u.hostname, port, tls, ws, protocolVersion, clientId, clean: !session, options };
}
