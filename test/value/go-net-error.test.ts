/**
 * Socket failures in Go's words (value/go-net-error.ts): the errors Bun and Node raise for a
 * refused dial, an unknown host, a reset or a certificate they cannot verify read as Go's `net`
 * and `crypto/tls` print them, as eKuiper's messages carry them.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { goNetErrorText } from "../../lib/value/go-net-error.ts";
import { freePort } from "../helpers/mosquitto.ts";

/** The error Bun.connect fails with. */
async function dialError(hostname: string, port: number): Promise<unknown> {
  try {
    (await Bun.connect({ hostname, port, socket: { data() {} } })).end();
  } catch (e) {
    return e;
  }
  throw new Error(`${hostname}:${port} accepted`);
}

const nameserver = /^\s*nameserver\s+(\S+)/m.exec(readFileSync("/etc/resolv.conf", "utf8"))?.[1] ?? "127.0.0.1";

test("a refused dial reads as Go's connect error, with the address dialed", async () => {
  const port = await freePort();
  const e = await dialError("127.0.0.1", port);
  expect(goNetErrorText(e, { host: "127.0.0.1", port })).toBe(`dial tcp 127.0.0.1:${port}: connect: connection refused`);
  // Node's errors carry the address: it wins over the target's name.
  expect(goNetErrorText({ code: "ECONNREFUSED", address: "::1", port: 1883 }, { host: "localhost", port: 1883 })).toBe("dial tcp [::1]:1883: connect: connection refused");
});

test("an unknown host reads as Go's DNS error naming the resolver", async () => {
  const e = await dialError("nohost.invalid", 1883);
  expect(goNetErrorText(e, { host: "nohost.invalid", port: 1883 })).toBe(`dial tcp: lookup nohost.invalid on ${nameserver}:53: no such host`);
  expect(goNetErrorText({ code: "EAI_AGAIN" }, { host: "h", port: 1 })).toBe(`dial tcp: lookup h on ${nameserver}:53: server misbehaving`);
});

test.each([
  ["ETIMEDOUT", "dial tcp 10.0.0.9:1883: i/o timeout"],
  ["EHOSTUNREACH", "dial tcp 10.0.0.9:1883: connect: no route to host"],
  ["ENETUNREACH", "dial tcp 10.0.0.9:1883: connect: network is unreachable"],
  ["ECONNRESET", "read tcp 10.0.0.9:1883: read: connection reset by peer"],
  ["EPIPE", "write tcp 10.0.0.9:1883: write: broken pipe"],
  ["SELF_SIGNED_CERT_IN_CHAIN", "tls: failed to verify certificate: x509: certificate signed by unknown authority"],
  ["CERT_HAS_EXPIRED", "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"],
  ["ERR_POSTGRES_CONNECTION_REFUSED", "dial tcp 10.0.0.9:1883: connect: connection refused"],
])("%s reads as Go's %p", (code, want) => {
  expect(goNetErrorText({ code, message: "x" }, { host: "10.0.0.9", port: 1883 })).toBe(want);
});

test("certificate failures of a real TLS handshake read as Go's x509 errors", async () => {
  const tls = join(import.meta.dir, "../../fixtures/tls");
  const [cert, key] = [readFileSync(join(tls, "mqtt-test.crt"), "utf8"), readFileSync(join(tls, "mqtt-test.key"), "utf8")];
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, tls: { key, cert }, socket: { data() {} } });
  const handshake = (opts: object) =>
    new Promise<unknown>((resolve) => {
      const s = tlsConnect({ host: "127.0.0.1", port: server.port, ...opts });
      s.on("error", resolve);
      s.on("secureConnect", () => (s.end(), resolve(undefined)));
    });
  try {
    const target = { host: "127.0.0.1", port: server.port };
    expect(goNetErrorText(await handshake({}), target)).toBe("tls: failed to verify certificate: x509: certificate signed by unknown authority");
    const other = { host: "other.example", port: server.port };
    expect(goNetErrorText(await handshake({ servername: "other.example", ca: [cert] }), other)).toBe("tls: failed to verify certificate: x509: certificate is valid for 127.0.0.1, not other.example");
  } finally {
    server.stop(true);
  }
});

test("an error without a socket code keeps no Go text", () => {
  expect(goNetErrorText(new Error("subscribe failed"), { host: "h", port: 1 })).toBeUndefined();
  expect(goNetErrorText("text", { host: "h", port: 1 })).toBeUndefined();
});
