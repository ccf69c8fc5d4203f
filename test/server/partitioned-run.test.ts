/** The pieces of a partitioned rule's run that need no group: which stream, each partition's definitions, the key warning, merged metrics. */
import { expect, test } from "bun:test";
import { NodeMetrics } from "../../lib/core/metrics.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { streamDef, type StreamDef } from "../../lib/plan/streams.ts";
import { mergeNodes } from "../../lib/server/partition-metrics.ts";
import { partitionedStream, sharedDurableError, partitionKeyWarning, partitionRunId, streamsForPartition, withEpochHeader } from "../../lib/server/partitioned-stream.ts";
import { parseStatement } from "../../lib/sql/parse.ts";
import { parseStoredRule } from "../../lib/store/stored-rule.ts";

const fns = createFunctionRegistry();
function stream(sql: string): StreamDef {
  const c = parseStatement(sql, fns);
  if (c.kind !== "create") throw new Error("not a CREATE");
  return streamDef(c, sql);
}
const rule = (sql: string) => parseStoredRule(JSON.stringify({ id: "r", sql, actions: [{ nop: {} }] }), fns, {});

const tele = stream(`CREATE STREAM tele () WITH (TYPE="mqtt", DATASOURCE="tele/{partition}/+", EXTRA="{\\"durable\\":\\"d_{partition}\\",\\"partitionKey\\":\\"deviceId\\"}")`);
const plain = stream(`CREATE STREAM plain () WITH (TYPE="mqtt", DATASOURCE="plain/#")`);
const streams = new Map([
  ["tele", tele],
  ["plain", plain],
]);

test("a rule is partitioned when a stream it reads has {partition} in its DATASOURCE", () => {
  expect(partitionedStream(rule("SELECT * FROM tele"), streams, 12)).toEqual({ stream: tele, count: 12, key: "deviceId" });
  expect(partitionedStream(rule("SELECT * FROM plain"), streams, 12)).toBeUndefined();
  const sixteen = stream(`CREATE STREAM t16 () WITH (DATASOURCE="x.{partition}", EXTRA="{\\"partitions\\":16}")`);
  expect(partitionedStream(rule("SELECT * FROM t16"), new Map([["t16", sixteen]]), 12)?.count).toBe(16);
});

test("partition p's run reads p: DATASOURCE and EXTRA name it, other streams are untouched", () => {
  const m = streamsForPartition(streams, tele, 7);
  expect(m.get("tele")!.options.DATASOURCE).toBe("tele/7/+");
  expect(JSON.parse(m.get("tele")!.options.EXTRA!)).toEqual({ durable: "d_7", partitionKey: "deviceId" });
  expect(m.get("plain")).toBe(plain);
  expect(streams.get("tele")!.options.DATASOURCE).toBe("tele/{partition}/+");
  expect(partitionRunId("r1", 7)).toBe("r1.p7");
});

test("GROUP BY without the partition key is warned about", () => {
  const part = partitionedStream(rule("SELECT * FROM tele"), streams, 12)!;
  expect(partitionKeyWarning(rule("SELECT deviceId, count(*) FROM tele GROUP BY deviceId, TUMBLINGWINDOW(ss, 10)"), part)).toBeUndefined();
  expect(partitionKeyWarning(rule("SELECT * FROM tele WHERE v > 1"), part)).toBeUndefined();
  // A window over every device is computed per partition: partial counts.
  expect(partitionKeyWarning(rule("SELECT count(*) FROM tele GROUP BY TUMBLINGWINDOW(ss, 10)"), part)).toContain("does not contain deviceId");
  expect(partitionKeyWarning(rule("SELECT site, count(*) FROM tele GROUP BY site, TUMBLINGWINDOW(ss, 10)"), part)).toBe(
    "rule r: GROUP BY does not contain deviceId, the partition key of stream tele: each partition computes its own groups",
  );
});

test("the runs' metrics add up node by node", () => {
  const a = new NodeMetrics("source", "tele");
  const b = new NodeMetrics("source", "tele");
  a.recordsIn = 3;
  b.recordsIn = 4;
  a.processLatencyUs = 10;
  b.processLatencyUs = 7;
  a.connectionStatus = 1;
  b.connectionStatus = 0;
  a.exception("old", 1);
  b.exception("new", 2);
  const m = mergeNodes("source", "tele", [a, b]);
  expect([m.recordsIn, m.processLatencyUs, m.connectionStatus, m.exceptions, m.lastException, m.recordsLost]).toEqual([7, 10, 0, 2, "new", -1]);
});

test("a partition run's nats sinks carry its epoch in header Floe-Epoch, beside their own headers; other sinks are left alone", () => {
  const actions = [{ nats: { subject: "out", headers: { a: "1" } } }, { nats: { subject: "o2" } }, { log: {} }];
  expect(withEpochHeader(actions, 7)).toEqual([{ nats: { subject: "out", headers: { a: "1", "Floe-Epoch": "7" } } }, { nats: { subject: "o2", headers: { "Floe-Epoch": "7" } } }, { log: {} }]);
  // The definition itself is not changed.
  expect(actions[0]).toEqual({ nats: { subject: "out", headers: { a: "1" } } });
});

test("a partitioned nats stream whose partitions would all read one JetStream durable is refused; one durable per partition, or none, is not", async () => {
  const js = (extra: string) => stream(`CREATE STREAM js () WITH (TYPE="nats", DATASOURCE="t.{partition}.*", EXTRA="${extra.replaceAll('"', '\\"')}")`);
  // The resolved durable of partition p: EXTRA's, {partition} replaced as a partition's run sees it.
  const durableOf = (s: StreamDef) => async (p: number) => String(JSON.parse(streamsForPartition(new Map([["js", s]]), s, p).get("js")!.options.EXTRA!).durable ?? "");
  const one = js(`{"stream":"IN","durable":"tele"}`);
  expect(await sharedDurableError(one, 12, durableOf(one))).toBe(`stream js: every partition would read JetStream durable tele: put {partition} in EXTRA's durable (e.g. "tele_{partition}") so that each partition has its own`);
  const each = js(`{"stream":"IN","durable":"tele_{partition}"}`);
  expect(await sharedDurableError(each, 12, durableOf(each))).toBeUndefined();
  // An ephemeral consumer per run, a single partition, another connector: nothing is shared.
  const none = js(`{"stream":"IN"}`);
  expect(await sharedDurableError(none, 12, durableOf(none))).toBeUndefined();
  expect(await sharedDurableError(one, 1, durableOf(one))).toBeUndefined();
  expect(await sharedDurableError(tele, 12, async () => "d")).toBeUndefined();
});
