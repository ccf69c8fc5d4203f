/**
 * The NATS source and sink against a real nats-server (JetStream on) started by the suite: core
 * subjects through a rule, queue groups, JetStream durable consumers acknowledging what the rule
 * took, JetStream publishes deduplicated by Nats-Msg-Id, reconnects after a server restart, and
 * bad payloads counted while the rule goes on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { deleteConsumer } from "../../../lib/connectors/nats/consumer.ts";
import { NatsServer } from "../../helpers/nats.ts";
import { metric, streams, testRuntime, waitFor } from "../../helpers/runtime.ts";

let server: NatsServer;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  server = await NatsServer.start();
  nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

/** Collects `subject payload` lines of a core subscription. */
function collect(subject: string): string[] {
  const got: string[] = [];
  nc.subscribe(subject, { callback: (_e, m) => void got.push(`${m.subject} ${m.string()}`) });
  return got;
}

const vars: Record<string, string> = {};
const rt = () => testRuntime({ vars });
let keys = 0;
/** A confKey of sources/nats.yaml given through NATS__<KEY>__<PROP> overrides, with this suite's server. */
function conf(props: Record<string, string | number | boolean> = {}): string {
  const key = `k${++keys}`;
  vars[`NATS__${key.toUpperCase()}__SERVER`] = server.url;
  for (const [k, v] of Object.entries(props)) vars[`NATS__${key.toUpperCase()}__${k.toUpperCase()}`] = String(v);
  return `CONF_KEY="${key}"`;
}

describe("nats core", () => {
  test("subjects with wildcards → rule → nats sink with a templated subject and headers; meta(subject)", async () => {
    const t = rt();
    const defs = streams(`CREATE STREAM s () WITH (TYPE="nats", DATASOURCE="dev.*.temp", ${conf()})`);
    const ruleDef = t.rule(
      {
        id: "fwd",
        sql: "SELECT t, meta(subject) AS subject FROM s WHERE t > 19",
        actions: [{ nats: { server: server.url, subject: "out.{{.t}}", sendSingle: true, headers: { origin: "floe-{{.t}}" } } }],
      },
      defs,
    );
    const got = collect("out.>");
    const hdrs: string[] = [];
    nc.subscribe("out.>", { callback: (_e, m) => void hdrs.push(m.headers?.get("origin") ?? "") });
    const rule = await ruleDef.start();
    await waitFor(() => metric(rule, "source_s_0_connection_status") === 1 && metric(rule, "sink_nats_0_0_connection_status") === 1, "connections");
    await nc.flush();
    for (let i = 0; i < 10; i++) nc.publish(`dev.d${i % 2}.temp`, JSON.stringify({ t: 15 + i }));
    nc.publish("dev.d0.humidity", JSON.stringify({ t: 99 }));
    await waitFor(() => got.length === 5, "5 results");
    expect(got.sort()).toEqual([20, 21, 22, 23, 24].map((v) => `out.${v} {"subject":"dev.d${(v - 15) % 2}.temp","t":${v}}`));
    expect(hdrs.sort()).toEqual(["floe-20", "floe-21", "floe-22", "floe-23", "floe-24"]);
    expect(metric(rule, "source_s_0_records_in_total")).toBe(10);
    await rule.stop();
  });

  test("a queue group splits the messages between two rules", async () => {
    const t = rt();
    const defs = streams(`CREATE STREAM q () WITH (TYPE="nats", DATASOURCE="work", ${conf({ queue: "workers"})})`);
    const aDef = t.rule({ id: "qa", sql: "SELECT n FROM q", actions: [{ nop: {} }] }, defs);
    const bDef = t.rule({ id: "qb", sql: "SELECT n FROM q", actions: [{ nop: {} }] }, defs);
    const a = await aDef.start();
    const b = await bDef.start();
    await waitFor(() => metric(a, "source_q_0_connection_status") === 1 && metric(b, "source_q_0_connection_status") === 1, "connections");
    // A source is announced once the server holds its subscription.
    await waitFor(() => t.ready.filter((s) => s === "q").length === 2, "both rules to subscribe");
    for (let i = 0; i < 200; i++) nc.publish("work", JSON.stringify({ n: i }));
    const inA = () => metric(a, "source_q_0_records_in_total") as number;
    const inB = () => metric(b, "source_q_0_records_in_total") as number;
    await waitFor(() => inA() + inB() === 200, "200 messages in total");
    // Each message to one member; both got a share.
    expect(inA()).toBeGreaterThan(0);
    expect(inB()).toBeGreaterThan(0);
    await a.stop();
    await b.stop();
  });

  test("a bad payload is counted on the decoder and the rule goes on", async () => {
    const t = rt();
    const defs = streams(`CREATE STREAM b () WITH (TYPE="nats", DATASOURCE="bad.in", ${conf()})`);
    const ruleDef = t.rule({ id: "bad", sql: "SELECT n FROM b", actions: [{ nats: { server: server.url, subject: "bad.out", sendSingle: true } }] }, defs);
    const got = collect("bad.out");
    const rule = await ruleDef.start();
    await waitFor(() => metric(rule, "source_b_0_connection_status") === 1 && metric(rule, "sink_nats_0_0_connection_status") === 1, "connections");
    await nc.flush();
    nc.publish("bad.in", JSON.stringify({ n: 1 }));
    nc.publish("bad.in", "{not json");
    nc.publish("bad.in", JSON.stringify({ n: 2 }));
    await waitFor(() => got.length === 2, "2 results");
    expect(got).toEqual(['bad.out {"n":1}', 'bad.out {"n":2}']);
    expect(metric(rule, "op_2_decoder_0_exceptions_total")).toBe(1);
    expect(String(metric(rule, "op_2_decoder_0_last_exception"))).toContain("invalid character");
    await rule.stop();
  });
});

describe("nats JetStream", () => {
  test("a durable consumer acknowledges what the rule took and resumes after a stop without loss or repeat", async () => {
    await jsm.streams.add({ name: "TELEM", subjects: ["telem.>"] });
    const js = (await import("@nats-io/jetstream")).jetstream(nc);
    for (let i = 0; i < 100; i++) await js.publish(`telem.d${i % 3}`, JSON.stringify({ n: i }));
    const t = rt();
    const defs = streams(`CREATE STREAM j () WITH (TYPE="nats", DATASOURCE="telem.>", ${conf({ stream: "TELEM", durable: "floe1"})})`);
    const def = { id: "jsr", sql: "SELECT n, meta(seq) AS seq, meta(stream) AS st FROM j", actions: [{ logToMemory: {} }, { nats: { server: server.url, subject: "jsr.out", sendSingle: true } }] };
    const got = collect("jsr.out");
    let ruleDef = t.rule(def, defs);
    let rule = await ruleDef.start();
    await waitFor(() => got.length === 100, "100 results");
    expect(JSON.parse(got[99]!.slice("jsr.out ".length))).toEqual({ n: 99, seq: 100, st: "TELEM" });
    // Acknowledged once taken: nothing pending at the server.
    await waitFor(async () => (await jsm.consumers.info("TELEM", "floe1")).num_ack_pending === 0, "no acknowledgement pending", 5000, 20);
    const info = await jsm.consumers.info("TELEM", "floe1");
    expect([info.num_ack_pending, info.ack_floor.stream_seq, info.num_redelivered]).toEqual([0, 100, 0]);
    await rule.stop();
    for (let i = 100; i < 150; i++) await js.publish(`telem.d${i % 3}`, JSON.stringify({ n: i }));
    ruleDef = t.rule(def, defs);
    rule = await ruleDef.start();
    await waitFor(() => got.length === 150, "150 results");
    // A fixed wait, to show that no redelivered duplicate follows the last result.
    await Bun.sleep(100);
    const ns = got.map((l) => (JSON.parse(l.slice("jsr.out ".length)) as { n: number }).n);
    expect(ns).toEqual([...Array(150).keys()]);
    expect(metric(rule, "source_j_0_records_in_total")).toBe(50);
    await rule.stop();
  });

  test("messages the rule has not taken are not acknowledged: a sink that cannot send holds them, a restart gets them again", async () => {
    await jsm.streams.add({ name: "HOLD", subjects: ["hold.in"] });
    const js = (await import("@nats-io/jetstream")).jetstream(nc);
    const t = rt();
    // A rule buffer of 8 and a sink queue of 4 that never drains (its HTTP server never answers):
    // the inlet stops taking, so at most a few dozen messages are taken and acknowledged.
    const mute = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const defs = streams(`CREATE STREAM h () WITH (TYPE="nats", DATASOURCE="hold.in", ${conf({ durable: "hold1", pullBatch: 4})})`);
    const ruleDef = t.rule(
      { id: "hold", sql: "SELECT n FROM h", options: { bufferLength: 8 }, actions: [{ rest: { url: `http://127.0.0.1:${mute.port}/x`, sendSingle: true, bufferLength: 4, timeout: 60000 } }] },
      defs,
    );
    const rule = await ruleDef.start();
    for (let i = 0; i < 200; i++) await js.publish("hold.in", JSON.stringify({ n: i }));
    // The rule takes what its queues hold, then stops taking: the count holds still over 100 ms.
    let last = -1;
    await waitFor(() => {
      const now = metric(rule, "source_h_0_records_in_total") as number;
      const still = now > 0 && now === last;
      last = now;
      return still;
    }, "the rule to stop taking", 10_000, 100);
    const info = await jsm.consumers.info("HOLD", "hold1");
    const taken = metric(rule, "source_h_0_records_in_total") as number;
    expect(taken).toBeLessThan(100);
    expect(info.ack_floor.stream_seq).toBeLessThanOrEqual(taken);
    expect(info.num_pending + info.num_ack_pending).toBeGreaterThanOrEqual(200 - taken);
    await rule.stop();
    mute.stop(true);
    const floor = (await jsm.consumers.info("HOLD", "hold1")).ack_floor.stream_seq;
    // The next run gets everything after the acknowledgement floor (redelivered or new), in order.
    const got = collect("hold.out");
    const againDef = t.rule({ id: "hold2", sql: "SELECT n FROM h", actions: [{ nats: { server: server.url, subject: "hold.out", sendSingle: true } }] }, defs);
    const again = await againDef.start();
    await waitFor(() => got.length === 200 - floor, `${200 - floor} results`);
    expect(got.map((l) => JSON.parse(l.slice("hold.out ".length)).n)).toEqual([...Array(200 - floor).keys()].map((i) => floor + i));
    // Redelivered messages are counted as duplicates.
    expect(again.duplicates()).toBeGreaterThan(0);
    await again.stop();
  });

  test("a JetStream sink publishes with Nats-Msg-Id: distinct emissions of the same rows are all stored, a msgId template decides", async () => {
    await jsm.streams.add({ name: "RESULTS", subjects: ["results.>"] });
    const t = rt();
    const defs = streams(`CREATE STREAM d () WITH (TYPE="nats", DATASOURCE="dd.in", ${conf()})`);
    const ruleDef = t.rule(
      {
        id: "dedup",
        sql: "SELECT dev, v FROM d",
        actions: [
          { nats: { server: server.url, subject: "results.{{.dev}}", jetstream: true, stream: "RESULTS", sendSingle: true } },
          { nats: { server: server.url, subject: "results.tpl", jetstream: true, msgId: "{{.dev}}-{{.v}}", sendSingle: true } },
        ],
      },
      defs,
    );
    const rule = await ruleDef.start();
    await waitFor(() => metric(rule, "source_d_0_connection_status") === 1 && metric(rule, "sink_nats_0_0_connection_status") === 1, "connections");
    await nc.flush();
    for (let round = 0; round < 2; round++) for (let i = 0; i < 10; i++) nc.publish("dd.in", JSON.stringify({ dev: `d${i % 2}`, v: i }));
    await waitFor(() => metric(rule, "sink_nats_0_0_records_out_total") === 20 && metric(rule, "sink_nats_1_0_records_out_total") === 20, "40 publishes");
    // 20 emissions on results.d0/d1, each its own id; on results.tpl the template's 10 ids: the second round was deduplicated.
    await waitFor(async () => (await jsm.streams.info("RESULTS")).state.messages >= 30, "30 stored", 5000, 20);
    await waitFor(() => metric(rule, "sink_nats_1_0_duplicates_total") === 10, "10 duplicates reported on the template's sink");
    expect((await jsm.streams.info("RESULTS")).state.messages).toBe(30);
    expect(metric(rule, "sink_nats_0_0_duplicates_total")).toBe(0);
    const m = await jsm.streams.getMessage("RESULTS", { last_by_subj: "results.d0" });
    expect(m!.header!.get("Nats-Msg-Id")).toMatch(/^dedup:nats_0:[0-9a-f]{12}-19$/);
    const tpl = await jsm.streams.getMessage("RESULTS", { last_by_subj: "results.tpl" });
    expect(tpl!.header!.get("Nats-Msg-Id")).toBe("d1-9");
    await rule.stop();
  });

  test("a server restart: the connection status follows, the source and sink reconnect, the durable resumes", async () => {
    await jsm.streams.add({ name: "RS", subjects: ["rs.in"] });
    const t = rt();
    const defs = streams(`CREATE STREAM r () WITH (TYPE="nats", DATASOURCE="rs.in", ${conf({ durable: "rs1", reconnectTimeWait: "100ms"})})`);
    const ruleDef = t.rule({ id: "rs", sql: "SELECT n FROM r", actions: [{ nats: { server: server.url, subject: "rs.out", sendSingle: true, reconnectTimeWait: "100ms" } }] }, defs);
    const got = collect("rs.out");
    const rule = await ruleDef.start();
    await waitFor(() => metric(rule, "source_r_0_connection_status") === 1 && metric(rule, "sink_nats_0_0_connection_status") === 1, "connections");
    const js = (await import("@nats-io/jetstream")).jetstream(nc);
    for (let i = 0; i < 5; i++) await js.publish("rs.in", JSON.stringify({ n: i }));
    await waitFor(() => got.length === 5, "5 results before the restart");
    await server.stop();
    try {
      await waitFor(() => metric(rule, "source_r_0_connection_status") === -1, "source disconnected");
      expect(String(metric(rule, "source_r_0_last_exception"))).toContain("disconnected");
    } finally {
      await server.restart();
    }
    await waitFor(() => metric(rule, "source_r_0_connection_status") === 1 && metric(rule, "sink_nats_0_0_connection_status") === 1, "reconnected", 15_000);
    // The test's own client reconnects as well.
    await waitFor(() => !nc.isClosed() && (nc as unknown as { protocol: { connected: boolean } }).protocol.connected, "test client");
    for (let i = 5; i < 10; i++) await js.publish("rs.in", JSON.stringify({ n: i }));
    await waitFor(() => got.length === 10, "10 results after the restart", 15_000);
    expect(got.map((l) => JSON.parse(l.slice("rs.out ".length)).n)).toEqual([...Array(10).keys()]);
    await rule.stop();
  });
});

describe("nats with checkpoints and named connections", () => {
  test("a windowed rule with checkpoints acknowledges when the checkpoint covering the messages is stored", async () => {
    await jsm.streams.add({ name: "CK", subjects: ["ck.in"] });
    const js = (await import("@nats-io/jetstream")).jetstream(nc);
    const t = rt();
    const defs = streams(`CREATE STREAM c () WITH (TYPE="nats", DATASOURCE="ck.in", ${conf({ durable: "ck1", ackWait: "1s" })})`);
    const ruleDef = t.rule(
      {
        id: "ck",
        sql: "SELECT count(*) AS c FROM c GROUP BY TUMBLINGWINDOW(ss, 3600)",
        options: { qos: 1, checkpointInterval: 3_600_000, enableSaveStateBeforeStop: true },
        actions: [{ nop: {} }],
      },
      defs,
    );
    const rule = await ruleDef.start();
    for (let i = 0; i < 50; i++) await js.publish("ck.in", JSON.stringify({ n: i }));
    await waitFor(() => metric(rule, "source_c_0_records_in_total") === 50, "50 taken");
    // Longer than ackWait (1 s): taken into the open window, in no checkpoint yet, so not
    // acknowledged — and kept from redelivery (+WPI) while they wait for the checkpoint.
    await Bun.sleep(2500);
    let info = await jsm.consumers.info("CK", "ck1");
    expect([info.num_ack_pending, info.ack_floor.stream_seq, info.num_redelivered]).toEqual([50, 0, 0]);
    expect(rule.duplicates()).toBe(0);
    // The final checkpoint at stop covers them: acknowledged.
    await rule.stop();
    info = await jsm.consumers.info("CK", "ck1");
    expect([info.num_ack_pending, info.ack_floor.stream_seq]).toEqual([0, 50]);
  });

  test("sources and sinks selecting one named nats connection share its client and follow its status", async () => {
    const props = { server: server.url };
    const t = testRuntime({
      vars: { NATS__VIACONN__CONNECTIONSELECTOR: "nconn" },
      confKey: (kind, type, key) => (kind === "connections" && type === "nats" && key === "nconn" ? props : undefined),
    });
    t.env.connections.open("nconn", "nats", props);
    const defs = streams(`CREATE STREAM a () WITH (TYPE="nats", DATASOURCE="nconn.a", CONF_KEY="viaconn")`, `CREATE STREAM b () WITH (TYPE="nats", DATASOURCE="nconn.b", CONF_KEY="viaconn")`);
    const got = collect("nconn.out.>");
    const raDef = t.rule({ id: "na", sql: "SELECT x FROM a", actions: [{ nats: { connectionSelector: "nconn", subject: "nconn.out.a", sendSingle: true } }] }, defs);
    const rbDef = t.rule({ id: "nb", sql: "SELECT x FROM b", actions: [{ nats: { connectionSelector: "nconn", subject: "nconn.out.b", sendSingle: true } }] }, defs);
    const ra = await raDef.start();
    const rb = await rbDef.start();
    await waitFor(() => metric(ra, "source_a_0_connection_status") === 1 && metric(rb, "sink_nats_0_0_connection_status") === 1, "connections");
    expect(t.env.connections.refs("nconn")).toEqual(["na_a_0", "na_nats_0_0", "nb_b_0", "nb_nats_0_0"]);
    expect(t.env.connections.state("nconn")).toEqual({ status: "connected" });
    await nc.flush();
    nc.publish("nconn.a", JSON.stringify({ x: 1 }));
    nc.publish("nconn.b", JSON.stringify({ x: 2 }));
    await waitFor(() => got.length === 2, "2 results");
    expect(got.sort()).toEqual(['nconn.out.a {"x":1}', 'nconn.out.b {"x":2}']);
    await ra.stop();
    await rb.stop();
    expect(t.env.connections.refs("nconn")).toEqual([]);
    // Opened by the host: it outlives its nodes.
    expect(t.env.connections.state("nconn")).toEqual({ status: "connected" });
    await t.env.connections.closeAll();
  });

  test("a sink selecting a connection of another type is refused", async () => {
    const mq = { server: "tcp://127.0.0.1:1" };
    const t = testRuntime({ vars, confKey: (kind, type, key) => (kind === "connections" && key === "mq" && type === "mqtt" ? mq : undefined) });
    t.env.connections.resolve = (id) => (id === "mq" ? { typ: "mqtt", props: mq } : undefined);
    const defs = streams(`CREATE STREAM s () WITH (TYPE="nats", DATASOURCE="x", ${conf()})`);
    expect(() => t.rule({ id: "bs", sql: "SELECT * FROM s", actions: [{ nats: { connectionSelector: "mq", subject: "x" } }] }, defs)).toThrow("connection mq should be nats connection");
  });
});

describe("nats recovery", () => {
  test("a consumer deleted under a running rule is created again and reading goes on", async () => {
    await jsm.streams.add({ name: "GONE", subjects: ["gone.in"] });
    const js = (await import("@nats-io/jetstream")).jetstream(nc);
    const t = rt();
    const defs = streams(`CREATE STREAM g () WITH (TYPE="nats", DATASOURCE="gone.in", ${conf({ durable: "gone1", deliverPolicy: "new" })})`);
    const ruleDef = t.rule({ id: "gone", sql: "SELECT n FROM g", actions: [{ nop: {} }] }, defs);
    const rule = await ruleDef.start();
    await waitFor(() => metric(rule, "source_g_0_connection_status") === 1, "connection");
    const taken = () => metric(rule, "source_g_0_records_in_total") as number;
    // Wait for the consumer to exist, then publish and delete it.
    const exists = async () => (await jsm.consumers.info("GONE", "gone1").catch(() => null)) !== null;
    await waitFor(exists, "the consumer", 2000, 10);
    await js.publish("gone.in", JSON.stringify({ n: 1 }));
    await waitFor(() => taken() === 1, "the first message");
    await deleteConsumer(jsm, "GONE", "gone1");
    await waitFor(() => String(rule.metrics().source_g_0_last_exception ?? "").includes("is gone: creating it again"), "the loss noticed", 15_000);
    await waitFor(exists, "the consumer created again", 2000, 20);
    await js.publish("gone.in", JSON.stringify({ n: 2 }));
    await waitFor(() => taken() === 2, "the message after the recreation", 15_000);
    expect(rule.exit).toBeUndefined();
    await rule.stop();
  });
});

describe("nats sink failures", () => {
  test("a publish the stream refuses is dropped and logged; the sink goes on", async () => {
    await jsm.streams.add({ name: "REF", subjects: ["ref.out"] });
    const t = rt();
    const defs = streams(`CREATE STREAM f () WITH (TYPE="nats", DATASOURCE="ref.in", ${conf()})`);
    const ruleDef = t.rule({ id: "ref", sql: "SELECT n FROM f", actions: [{ nats: { server: server.url, subject: "ref.out", stream: "NOTREF", sendSingle: true } }] }, defs);
    const rule = await ruleDef.start();
    await waitFor(() => metric(rule, "source_f_0_connection_status") === 1 && metric(rule, "sink_nats_0_0_connection_status") === 1, "connections");
    await nc.flush();
    for (let n = 0; n < 5; n++) nc.publish("ref.in", JSON.stringify({ n }));
    await waitFor(() => t.logs.filter((l) => l.includes("refused by the stream, dropped: expected stream does not match")).length === 5, "5 refusals logged");
    expect((await jsm.streams.info("REF")).state.messages).toBe(0);
    expect(rule.exit).toBeUndefined();
    await rule.stop();
  });

  test("a publish no stream answers is published again until one does", async () => {
    const t = rt();
    const defs = streams(`CREATE STREAM l () WITH (TYPE="nats", DATASOURCE="late.in", ${conf()})`);
    const ruleDef = t.rule({ id: "late", sql: "SELECT n FROM l", actions: [{ nats: { server: server.url, subject: "late.out", jetstream: true, sendSingle: true, retryInterval: 50 } }] }, defs);
    const rule = await ruleDef.start();
    await waitFor(() => metric(rule, "source_l_0_connection_status") === 1 && metric(rule, "sink_nats_0_0_connection_status") === 1, "connections");
    await nc.flush();
    for (let n = 0; n < 3; n++) nc.publish("late.in", JSON.stringify({ n }));
    await waitFor(() => t.logs.some((l) => l.includes("no stream answers for this subject")), "the failure logged");
    // Sent, not confirmed: the sink is not settled (a group partition would not upload its checkpoint now).
    expect(rule.sinksSettled()).toBe(false);
    await jsm.streams.add({ name: "LATE", subjects: ["late.out"] });
    // Published again by the sink's timer (no further item comes to take them along).
    await waitFor(async () => (await jsm.streams.info("LATE")).state.messages >= 3, "3 stored", 10_000, 50);
    await waitFor(() => rule.sinksSettled(), "the sink settled once the stream confirmed all three");
    const ns: number[] = [];
    for (let seq = 1; seq <= 3; seq++) ns.push((await jsm.streams.getMessage("LATE", { seq }))!.json<{ n: number }>().n);
    expect(ns.sort()).toEqual([0, 1, 2]);
    await rule.stop();
  });

  test("a publish confirmed only after a later one holds the sink's watermark back until it is", async () => {
    await jsm.streams.add({ name: "ORD", subjects: ["ord.ok"] });
    const t = rt();
    const defs = streams(`CREATE STREAM o () WITH (TYPE="nats", DATASOURCE="ord.in", ${conf()})`);
    const ruleDef = t.rule({ id: "ord", sql: "SELECT sub FROM o", actions: [{ nats: { server: server.url, subject: "{{.sub}}", jetstream: true, sendSingle: true } }] }, defs);
    const rule = await ruleDef.start();
    try {
      await waitFor(() => metric(rule, "source_o_0_connection_status") === 1 && metric(rule, "sink_nats_0_0_connection_status") === 1, "connections");
      await nc.flush();
      nc.publish("ord.in", JSON.stringify({ sub: "ord.none" }));
      nc.publish("ord.in", JSON.stringify({ sub: "ord.ok" }));
      await waitFor(async () => (await jsm.streams.info("ORD")).state.messages === 1, "the second result stored");
      await waitFor(() => t.logs.some((l) => l.includes("no stream answers for this subject")), "the first one's failure");
      const sink = rule.sinks[0]!;
      // The second is confirmed, the first is not: neither result counts as delivered.
      expect([sink.given, sink.safe(true), sink.safe(false)]).toEqual([2, 0, 0]);
      await jsm.streams.add({ name: "ORDNONE", subjects: ["ord.none"] });
      await waitFor(() => sink.safe(true) === 2, "both delivered once the first is stored", 10_000, 20);
    } finally {
      await rule.stop();
    }
  });

  test("while the server is down a JetStream sink's items wait in its cache and go out after the reconnect", async () => {
    await jsm.streams.add({ name: "CACHED", subjects: ["cached.out"] });
    const t = rt();
    const defs = streams(`CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="cached/in")`);
    const ruleDef = t.rule(
      { id: "cached", sql: "SELECT n FROM m", actions: [{ nats: { server: server.url, subject: "cached.out", jetstream: true, sendSingle: true, enableCache: true, resendInterval: 20, reconnectTimeWait: "100ms" } }] },
      defs,
    );
    const rule = await ruleDef.start();
    await waitFor(() => metric(rule, "sink_nats_0_0_connection_status") === 1, "sink connection");
    await server.stop();
    try {
      await waitFor(() => metric(rule, "sink_nats_0_0_connection_status") === -1, "sink disconnected");
      for (let n = 0; n < 20; n++) t.env.pubsub.publish("cached/in", { n });
      await waitFor(() => metric(rule, "sink_nats_0_0_records_in_total") === 20 && (metric(rule, "sink_nats_0_0_exceptions_total") as number) > 0, "the items at the sink, a send refused");
    } finally {
      await server.restart();
    }
    await waitFor(() => metric(rule, "sink_nats_0_0_connection_status") === 1, "sink reconnected", 15_000);
    await waitFor(() => !nc.isClosed() && (nc as unknown as { protocol: { connected: boolean } }).protocol.connected, "test client");
    await waitFor(async () => (await jsm.streams.info("CACHED")).state.messages >= 20, "20 stored", 15_000, 50);
    expect((await jsm.streams.info("CACHED")).state.messages).toBe(20);
    await rule.stop();
  });
});
