/**
 * NATS connection properties (docs/connectors.md, "NATS") → the official client's ConnectionOptions: a
 * `server` list, token, user/password, a `.creds` file (JWT + nkey seed), TLS files or raw PEM.
 * The same property names as the MQTT connector where the concept is the same.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { credsAuthenticator, type ConnectionOptions } from "@nats-io/transport-node";
import { EngineError, ErrCode } from "../../errors.ts";
import { PropReader, type Props } from "../../config/props.ts";

export interface NatsConf {
  /** `nats://host:port` URLs, in the order the client tries them. */
  readonly servers: string[];
  /** What connection logs and `ready` texts show (`nats://127.0.0.1:4222`). */
  readonly label: string;
  readonly options: ConnectionOptions;
}

export const DEFAULT_NATS_SERVER = "nats://127.0.0.1:4222";

function readFile(path: string, base: string): Buffer {
  return readFileSync(isAbsolute(path) ? path : join(base, path));
}

/** `server`: one URL, a comma-separated list, or a yaml list; `tls://` asks for TLS. */
export function parseServers(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw.map(String) : typeof raw === "string" ? raw.split(",") : [];
  const out: string[] = [];
  for (const s of list) {
    const t = s.trim();
    if (!t) continue;
    // The client takes host:port as well; a scheme keeps the log lines unambiguous.
    const url = /^[a-z]+:\/\//i.test(t) ? t : `nats://${t}`;
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new EngineError(`invalid server url ${t}`);
    }
    const scheme = u.protocol.replace(/:$/, "").toLowerCase();
    if (scheme !== "nats" && scheme !== "tls") throw new EngineError(`invalid server url ${t}: the scheme must be nats:// or tls://`);
    out.push(url);
  }
  return out;
}

/** Parses connection properties (throws EngineError); `base` resolves relative file paths. */
export function parseNatsConf(props: Props, opts: { base?: string; name?: string } = {}): NatsConf {
  const r = new PropReader(props);
  const servers = parseServers(r.raw("server") ?? DEFAULT_NATS_SERVER);
  if (servers.length === 0) throw new EngineError("missing server property", ErrCode.general);
  const base = opts.base ?? process.cwd();
  const options: ConnectionOptions = {
    servers,
    name: r.str("name") || opts.name || "floe",
    // The first connection is retried by NatsLink (with back-off, stoppable by close); once
    // connected, the client itself reconnects forever. Sources and sinks report the state and wait.
    waitOnFirstConnect: false,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: r.duration("reconnectTimeWait", 1000),
    timeout: r.duration("connectionTimeout", 5000),
    pingInterval: r.duration("pingInterval", 20_000),
  };
  const token = r.str("token");
  const user = r.str("username") || r.str("user");
  const creds = r.str("credsFile");
  if (token && user) throw new EngineError("nats: token and username are exclusive");
  if (token) options.token = token;
  if (user) {
    options.user = user;
    options.pass = r.str("password");
  }
  if (creds) {
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(readFile(creds, base));
    } catch (e) {
      throw new EngineError(`nats: cannot read credsFile ${creds}: ${(e as Error).message}`);
    }
    options.authenticator = credsAuthenticator(bytes);
  }
  const cert = r.str("certificationPath");
  const key = r.str("privateKeyPath");
  const ca = r.str("rootCaPath");
  const certRaw = r.str("certificationRaw");
  const keyRaw = r.str("privateKeyRaw");
  const caRaw = r.str("rootCARaw");
  const insecure = r.bool("insecureSkipVerify");
  const wantsTls = r.bool("tls") || servers.some((s) => s.toLowerCase().startsWith("tls://")) || !!(cert || key || ca || certRaw || keyRaw || caRaw);
  if (wantsTls) {
    const tls: NonNullable<ConnectionOptions["tls"]> & { rejectUnauthorized?: boolean } = {};
    if (cert) tls.certFile = isAbsolute(cert) ? cert : join(base, cert);
    else if (certRaw) tls.cert = Buffer.from(certRaw, "base64").toString();
    if (key) tls.keyFile = isAbsolute(key) ? key : join(base, key);
    else if (keyRaw) tls.key = Buffer.from(keyRaw, "base64").toString();
    if (ca) tls.caFile = isAbsolute(ca) ? ca : join(base, ca);
    else if (caRaw) tls.ca = Buffer.from(caRaw, "base64").toString();
    // Passed through to node:tls by the client.
    if (insecure) tls.rejectUnauthorized = false;
    options.tls = tls;
  }
  return { servers, label: servers.join(","), options };
}
