/** The rule runtime API the daemon drives: validation texts, states, status keys, topology, bus policy. */
import { expect, test } from "bun:test";
import { metric, streams, testRuntime, waitFor } from "../helpers/runtime.ts";

const defs = streams(
  `CREATE STREAM alert () WITH (TYPE="mqtt", DATASOURCE="alert", CONF_KEY="nowhere")`,
  `CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="rule/in")`,
);

test("the topology has eKuiper's node names (rest_test's example)", async () => {
  // An unreachable broker: the rule still runs, its source shows connection_status 0 / -1.
  const t = testRuntime({ vars: { MQTT_SOURCE__NOWHERE__SERVER: "tcp://127.0.0.1:9" } });
  const rule = t.rule({ id: "rule1", sql: "select * from alert", actions: [{ nop: {} }] }, defs);
  expect(rule.topo()).toBeUndefined();
  expect(rule.status()).toEqual({ status: "stopped", message: "", lastStartTimestamp: 0, lastStopTimestamp: 0, nextStartTimestamp: 0 });
  await rule.start();
  expect(rule.state).toBe("running");
  expect(JSON.stringify(rule.topo())).toBe(
    '{"sources":["source_alert"],"edges":{"op_2_decoder":["op_3_project"],"op_3_project":["op_nop_0_0_transform"],"op_nop_0_0_transform":["op_nop_0_1_encode"],"op_nop_0_1_encode":["sink_nop_0"],"source_alert":["op_2_decoder"]}}',
  );
  const keys = Object.keys(rule.status());
  expect(keys.slice(0, 5)).toEqual(["status", "message", "lastStartTimestamp", "lastStopTimestamp", "nextStartTimestamp"]);
  const prefixes = [...new Set(keys.slice(5).map((k) => k.replace(/_0_[a-z_]+$/, "")))];
  expect(prefixes).toEqual(["source_alert", "op_2_decoder", "op_3_project", "op_nop_0_0_transform", "op_nop_0_1_encode", "sink_nop_0"]);
  expect([0, -1]).toContain(metric(rule, "source_alert_0_connection_status") as number);
  await rule.stop();
  expect(rule.state).toBe("stopped");
  expect(rule.message).toBe("canceled manually");
  expect(metric(rule, "op_3_project_0_records_in_total")).toBe(0);
});

test("options are validated with eKuiper's messages", () => {
  const t = testRuntime();
  const mk = (options: unknown) => () => t.rule({ id: "r", sql: "SELECT * FROM m", actions: [{ nop: {} }], options }, defs);
  expect(mk({ bufferLength: -1, concurrency: -2 })).toThrow(
    "Rule r has invalid options: invalidConcurrency:concurrency must be greater than 0\ninvalidBufferLength:bufferLength must be greater than 0.",
  );
  expect(mk({ lateTolerance: 1.5 })).toThrow("duration 1.5 is not an integer");
  expect(() => t.rule({ id: "r", sql: "SELECT * FROM nope", actions: [{ nop: {} }] }, defs)).toThrow();
});

test("starting a running rule restarts it, and metrics start from zero", async () => {
  const t = testRuntime();
  const rule = t.rule({ id: "re", sql: "SELECT n FROM m", actions: [{ nop: {} }] }, defs);
  await rule.start();
  await t.env.pubsub.publish("rule/in", { n: 1 });
  await waitFor(() => metric(rule, "sink_nop_0_0_records_out_total") === 1, "one");
  await rule.start();
  expect(rule.state).toBe("running");
  expect(metric(rule, "sink_nop_0_0_records_out_total")).toBe(0);
  await rule.stop();
});

test("back-pressure is the default; drop-oldest only when disableBufferFullDiscard is false, and every drop is counted", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch() {
      await gate;
      return new Response("ok");
    },
  });
  const t = testRuntime();
  const url = `http://127.0.0.1:${server.port}/`;
  const mk = (id: string, options: Record<string, unknown>) =>
    t.rule({ id, sql: "SELECT n FROM m", options, actions: [{ rest: { url, method: "post", sendSingle: true, bufferLength: 2 } }] }, defs);
  const block = mk("block", { bufferLength: 4 });
  const drop = mk("drop", { bufferLength: 4, disableBufferFullDiscard: false });
  await block.start();
  await drop.start();
  let published = 0;
  const pub = (async () => {
    for (let n = 0; n < 20; n++) {
      await t.env.pubsub.publish("rule/in", { n });
      published++;
    }
  })();
  await waitFor(() => (metric(drop, "source_m_0_exceptions_total") as number) > 0, "drops");
  // The blocking rule holds the publisher back (the memory chain pushes back): it has not finished.
  expect(published).toBeLessThan(20);
  expect(metric(block, "source_m_0_exceptions_total")).toBe(0);
  release();
  await pub;
  await waitFor(() => metric(block, "sink_rest_0_0_records_out_total") === 20, "all 20 through the blocking rule");
  await drop.stop();
  await block.stop();
  server.stop(true);
});
