/**
 * parseDelivery (lib/connectors/nats/consumer.ts): the acknowledgement subject of a JetStream
 * delivery read without splitting it, in its v1 form and the v2 form with domain and account hash
 * (with and without the trailing token); anything else is no delivery.
 */
import { expect, test } from "bun:test";
import type { Msg } from "@nats-io/transport-node";
import { parseDelivery } from "../../../lib/connectors/nats/consumer.ts";

const msg = (reply: string): Msg => ({ subject: "t.a", reply, data: new Uint8Array([1]), headers: undefined }) as unknown as Msg;
const fields = (reply: string) => {
  const d = parseDelivery(msg(reply));
  return d && { seq: d.seq, deliveries: d.deliveries, timestamp: d.timestamp, pending: d.pending, reply: d.reply, subject: d.subject };
};

test("the v1 subject: deliveries, stream sequence, timestamp (ns → ms, exact beyond a double's precision), pending", () => {
  const r = "$JS.ACK.IN.tele_3.2.300005.41.1767225612345999999.17";
  expect(fields(r)).toEqual({ seq: 300005, deliveries: 2, timestamp: 1767225612345, pending: 17, reply: r, subject: "t.a" });
});

test("the v2 subject with domain and account hash, with and without its trailing token", () => {
  expect(fields("$JS.ACK.hub.ACCHASH.IN.c.1.9007199254740991.5.1767225600000000000.0")).toMatchObject({ seq: 9007199254740991, deliveries: 1, timestamp: 1767225600000, pending: 0 });
  expect(fields("$JS.ACK.hub.ACCHASH.IN.c.3.12.5.1767225600001000000.4.tok")).toMatchObject({ seq: 12, deliveries: 3, timestamp: 1767225600001, pending: 4 });
});

test("not a delivery: no reply, another subject, a wrong token count, a token that is not a number", () => {
  expect(parseDelivery(msg(""))).toBeNull();
  expect(parseDelivery(msg("_INBOX.x.y"))).toBeNull();
  expect(parseDelivery(msg("$JS.ACK.IN.c.1.2.3.4"))).toBeNull();
  expect(parseDelivery(msg("$JS.ACK.IN.c.1.2.3.4.5.6"))).toBeNull();
  expect(parseDelivery(msg("$JS.ACK.a.b.c.d.e.f.g.h.i.j.k.l.m"))).toBeNull();
  expect(parseDelivery(msg("$JS.ACK.IN.c.1.x2.3.1767225600000000000.5"))).toBeNull();
  expect(parseDelivery(msg("$JS.ACK.IN.c.1..3.1767225600000000000.5"))).toBeNull();
});
