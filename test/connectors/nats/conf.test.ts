import { expect, test } from "bun:test";
import { parseNatsConf, parseServers } from "../../../lib/connectors/nats/conf.ts";
import { consumerConfig, deliverPolicyOf } from "../../../lib/connectors/nats/consumer.ts";
import { NatsSource } from "../../../lib/connectors/nats/source.ts";
import { NatsSink } from "../../../lib/connectors/nats/sink.ts";

test("server: one URL, a comma-separated list or a list; host:port gets nats://", () => {
  expect(parseServers("nats://a:4222")).toEqual(["nats://a:4222"]);
  expect(parseServers("a:1, tls://b:2")).toEqual(["nats://a:1", "tls://b:2"]);
  expect(parseServers(["a:1", "nats://c:3"])).toEqual(["nats://a:1", "nats://c:3"]);
  expect(() => parseServers("http://a:1")).toThrow("invalid server url http://a:1: the scheme must be nats:// or tls://");
});

test("credentials: token, username/password; TLS from a tls:// server or certificate files", () => {
  expect(parseNatsConf({ server: "nats://a:1", token: "t" }).options.token).toBe("t");
  const up = parseNatsConf({ server: "nats://a:1", username: "u", password: "p" }).options;
  expect([up.user, up.pass]).toEqual(["u", "p"]);
  expect(() => parseNatsConf({ token: "t", username: "u" })).toThrow("nats: token and username are exclusive");
  expect(parseNatsConf({ server: "tls://a:1" }).options.tls).toEqual({});
  expect(parseNatsConf({ server: "nats://a:1", rootCaPath: "/ca.pem", insecureSkipVerify: true }).options.tls as unknown).toEqual({ caFile: "/ca.pem", rejectUnauthorized: false });
  expect(parseNatsConf({}).servers).toEqual(["nats://127.0.0.1:4222"]);
  expect(() => parseNatsConf({ credsFile: "/nonexistent.creds" })).toThrow("nats: cannot read credsFile /nonexistent.creds");
});

test("deliver policies and the consumer configuration floe creates", () => {
  expect(deliverPolicyOf("ByStartSequence")).toBe("by_start_sequence");
  expect(deliverPolicyOf("last_per_subject")).toBe("last_per_subject");
  expect(() => deliverPolicyOf("first")).toThrow("invalid deliverPolicy first: one of all, new, last, last_per_subject, by_start_sequence, by_start_time");
  const cfg = consumerConfig({ stream: "S", durable: "d", subject: "a.>", deliverPolicy: "by_start_sequence", startSeq: 7, startTime: "", ackWait: 2000, maxAckPending: 100, ackPolicy: "explicit" });
  expect(cfg).toEqual({ ack_policy: "explicit", deliver_policy: "by_start_sequence", opt_start_seq: 7, ack_wait: 2_000_000_000, max_ack_pending: 100, durable_name: "d", filter_subject: "a.>" });
  const eph = consumerConfig({ stream: "S", durable: "", subject: "", deliverPolicy: "new", startSeq: 0, startTime: "", ackWait: 1000, maxAckPending: -1, ackPolicy: "all" });
  expect(eph.inactive_threshold).toBe(300_000_000_000);
  expect(eph.durable_name).toBeUndefined();
  expect(eph.ack_policy).toBe("all");
});

test("source and sink properties are validated with clear errors", () => {
  expect(() => new NatsSource({})).toThrow("subject is required");
  expect(() => new NatsSource({ datasource: "a", durable: "d", queue: "q" })).toThrow("nats: queue is for core subscriptions; JetStream consumers share work through a durable");
  expect(() => new NatsSource({ datasource: "a,b", stream: "S" })).toThrow("nats: a JetStream source reads one subject filter");
  expect(() => new NatsSource({ datasource: "a", stream: "S", ackPolicy: "none" })).toThrow("invalid ackPolicy none: explicit or all");
  expect(new NatsSource({ datasource: "a" }).js).toBeUndefined();
  expect(new NatsSource({ stream: "S" }).js?.subject).toBe("");
  expect(() => new NatsSink({})).toThrow("nats sink is missing property subject");
  expect(() => new NatsSink({ subject: "a.>" })).toThrow("nats sink subject shouldn't contain * or >");
  expect(() => new NatsSink({ subject: "a.{{.x}}" })).not.toThrow();
});
