/** The kind of a failed connection attempt, from the texts the connectors give (Go's socket texts, paho's CONNACK texts). */
import { expect, test } from "bun:test";
import { connectFailureLine, failureKind } from "../../lib/net/connect-failure.ts";

test.each([
  ["network Error : dial tcp 127.0.0.1:1883: connect: connection refused", "refused"],
  ["network Error : dial tcp: lookup broker.invalid on 127.0.0.53:53: no such host", "DNS"],
  ["network Error : tls: failed to verify certificate: x509: certificate signed by unknown authority", "TLS"],
  ["tls: first record does not look like a TLS handshake", "TLS"],
  ["bad user name or password", "auth"],
  ["not Authorized", "auth"],
  ["'Authorization Violation'", "auth"],
  ["network Error : dial tcp 10.0.0.1:1883: i/o timeout", "timeout"],
  ["dial tcp 10.0.0.1:1883: connect: no route to host", "unreachable"],
  ["read tcp 127.0.0.1:1883: read: connection reset by peer", "reset"],
  ["server Unavailable", "error"],
])("%s is %s", (text, kind) => {
  expect(failureKind(text)).toBe(kind);
});

test("the line names the target, the kind, the text and the next attempt", () => {
  expect(connectFailureLine("mqtt://127.0.0.1:1", "network Error : dial tcp 127.0.0.1:1: connect: connection refused", 400, Date.UTC(2026, 0, 1))).toBe(
    "Failed to connect to mqtt://127.0.0.1:1 (refused): network Error : dial tcp 127.0.0.1:1: connect: connection refused; next retry in 400 ms at 2026-01-01T00:00:00.400Z",
  );
});
