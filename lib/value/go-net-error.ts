/**
 * Go's texts for socket failures. eKuiper's messages carry what Go's `net` and `crypto/tls`
 * packages print (`dial tcp 127.0.0.1:1883: connect: connection refused`); Node and Bun give
 * `connect ECONNREFUSED 127.0.0.1:1883`. This maps the error codes a dial, a read or a TLS
 * handshake fails with to Go's shapes (docs/connections.md lists them):
 *
 * | code | Go text |
 * |---|---|
 * | ECONNREFUSED / EHOSTUNREACH / ENETUNREACH | `dial tcp <ip:port>: connect: connection refused` / `no route to host` / `network is unreachable` |
 * | ETIMEDOUT (connect) | `dial tcp <ip:port>: i/o timeout` |
 * | ENOTFOUND / EAI_AGAIN (DNS) | `dial tcp: lookup <host> on <nameserver>:53: no such host` / `server misbehaving` |
 * | ECONNRESET / EPIPE | `read tcp <ip:port>: read: connection reset by peer` / `write tcp <ip:port>: write: broken pipe` |
 * | certificate errors | `tls: failed to verify certificate: x509: …` |
 * | TLS to a plain port | `tls: first record does not look like a TLS handshake` |
 *
 * Go prints the local address of an established connection too (`read tcp a->b`); Node's errors
 * do not carry it, so the texts name the remote address only.
 */
import { readFileSync } from "node:fs";

/** Where the failing socket was going. */
export interface DialTarget {
  readonly host: string;
  readonly port: number;
}

const CONNECT: Record<string, string> = {
  ECONNREFUSED: "connect: connection refused",
  EHOSTUNREACH: "connect: no route to host",
  ENETUNREACH: "connect: network is unreachable",
};

const UNKNOWN_AUTHORITY = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
]);

const VERIFY = "tls: failed to verify certificate: x509: ";

let nameserver: string | undefined;

/** The first `nameserver` of /etc/resolv.conf as Go names it (`127.0.0.53:53`); Go's default without one. */
function resolver(): string {
  if (nameserver !== undefined) return nameserver;
  let ns = "";
  try {
    ns = /^\s*nameserver\s+(\S+)/m.exec(readFileSync("/etc/resolv.conf", "utf8"))?.[1] ?? "";
  } catch {
    // no resolv.conf: Go asks the local resolver
  }
  nameserver = ns ? joinHostPort(ns, 53) : "127.0.0.1:53";
  return nameserver;
}

/** Go's net.JoinHostPort: IPv6 addresses in brackets. */
function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

function field(e: object, k: string): unknown {
  return (e as Record<string, unknown>)[k];
}

/** `x509: certificate is valid for a, b, not c` from Node's altname message. */
function altnameText(message: string, host: string): string {
  const names = /cert's (?:CN|altnames|list): (.*)$/.exec(message)?.[1];
  if (!names) return `${VERIFY}certificate is not valid for ${host}`;
  const list = names.split(/,\s*/).map((n) => n.replace(/^(DNS|IP Address):/, ""));
  return `${VERIFY}certificate is valid for ${list.join(", ")}, not ${host}`;
}

/**
 * Go's text for socket error `e` met going to `target`, or undefined when `e` carries no code
 * this maps (the caller keeps its own text then).
 */
export function goNetErrorText(e: unknown, target: DialTarget): string | undefined {
  if (!e || typeof e !== "object") return undefined;
  const code = String(field(e, "code") ?? "");
  const message = String(field(e, "message") ?? "");
  const address = typeof field(e, "address") === "string" ? (field(e, "address") as string) : target.host;
  const port = typeof field(e, "port") === "number" ? (field(e, "port") as number) : target.port;
  const addr = joinHostPort(address, port);
  // Bun's SQL clients: `ERR_POSTGRES_CONNECTION_REFUSED`, `ERR_MYSQL_CONNECTION_REFUSED`.
  const connect = CONNECT[/^ERR_[A-Z]+_CONNECTION_REFUSED$/.test(code) ? "ECONNREFUSED" : code];
  if (connect) return `dial tcp ${addr}: ${connect}`;
  if (code === "ETIMEDOUT") return `dial tcp ${addr}: i/o timeout`;
  if (code === "ENOTFOUND") return `dial tcp: lookup ${target.host} on ${resolver()}: no such host`;
  if (code === "EAI_AGAIN") return `dial tcp: lookup ${target.host} on ${resolver()}: server misbehaving`;
  if (code === "ECONNRESET" && !/TLS/.test(message)) return `read tcp ${addr}: read: connection reset by peer`;
  if (code === "EPIPE") return `write tcp ${addr}: write: broken pipe`;
  if (UNKNOWN_AUTHORITY.has(code)) return `${VERIFY}certificate signed by unknown authority`;
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID") return `${VERIFY}certificate has expired or is not yet valid`;
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") return altnameText(message, target.host);
  // A TLS client on a plain port: OpenSSL's `wrong version number`, or Bun's reset before the handshake.
  if (/wrong version number|before secure TLS connection/i.test(message)) return "tls: first record does not look like a TLS handshake";
  return undefined;
}
