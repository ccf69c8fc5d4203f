/** The rule runtime API the daemon drives: validation texts, run handles, status keys, topology, bus policy. */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunExit } from "../../lib/runtime/rule.ts";
import { metric, streams, testRuntime, waitFor } from "../helpers/runtime.ts";

const defs = streams(
  `CREATE STREAM alert () WITH (TYPE="mqtt", DATASOURCE="alert", CONF_KEY="nowhere")`,
  `CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="rule/in")`,
);

test("the topology has eKuiper's node names (rest_test's example)", async () => {
  // An unreachable broker: the run still goes on, its source shows connection_status 0 / -1.
  const t = testRuntime({ vars: { MQTT_SOURCE__NOWHERE__SERVER: "tcp://127.0.0.1:9" } });
  const rule = t.rule({ id: "rule1", sql: "select * from alert", actions: [{ nop: {} }] }, defs);
  const run = await rule.start();
  expect(JSON.stringify(run.topo())).toBe(
    '{"sources":["source_alert"],"edges":{"op_2_decoder":["op_3_project"],"op_3_project":["op_nop_0_0_transform"],"op_nop_0_0_transform":["op_nop_0_1_encode"],"op_nop_0_1_encode":["sink_nop_0"],"source_alert":["op_2_decoder"]}}',
  );
  // The run's status keys, in status order; the state fields in front are the host's (server/lifecycle.ts).
  const keys = Object.keys(run.metrics());
  const prefixes = [...new Set(keys.map((k) => k.replace(/_0_[a-z_]+$/, "")))];
  expect(prefixes).toEqual(["source_alert", "op_2_decoder", "op_3_project", "op_nop_0_0_transform", "op_nop_0_1_encode", "sink_nop_0"]);
  expect([0, -1]).toContain(metric(run, "source_alert_0_connection_status") as number);
  await run.stop();
  // Stopped by its host: the run reports no exit of its own, and its metrics stay readable.
  expect(run.exit).toBeUndefined();
  expect(metric(run, "op_3_project_0_records_in_total")).toBe(0);
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

test("every start is a new run: its metrics start from zero, the closed run keeps its own", async () => {
  const t = testRuntime();
  const rule = t.rule({ id: "re", sql: "SELECT n FROM m", actions: [{ nop: {} }] }, defs);
  const first = await rule.start();
  await t.env.pubsub.publish("rule/in", { n: 1 });
  await waitFor(() => metric(first, "sink_nop_0_0_records_out_total") === 1, "one");
  await first.stop();
  const second = await rule.start();
  expect(metric(second, "sink_nop_0_0_records_out_total")).toBe(0);
  expect(metric(first, "sink_nop_0_0_records_out_total")).toBe(1);
  await second.stop();
  // Stopping is idempotent: every call gets the one closing.
  await second.stop();
});

test("a run ends by itself at EOF, closing before it reports", async () => {
  const t = testRuntime();
  const dir = mkdtempSync(join(tmpdir(), "floe-eof-"));
  writeFileSync(join(dir, "in.json"), '[{"n":1},{"n":2}]');
  const eofDefs = streams(`CREATE STREAM f () WITH (TYPE="file", DATASOURCE="in.json", EXTRA="{\\"path\\":\\"${dir}\\"}")`);
  let exited: RunExit | undefined;
  const run = await t.rule({ id: "eof", sql: "SELECT n FROM f", actions: [{ nop: {} }] }, eofDefs).start((e) => (exited = e));
  await waitFor(() => exited !== undefined, "the end of the file");
  expect(exited).toEqual({ kind: "eof" });
  expect(run.exit).toEqual({ kind: "eof" });
  expect(metric(run, "sink_nop_0_0_records_out_total")).toBe(2);
  expect(run.scanTables()).toBeUndefined();
  expect(() => run.resetState("f", 0)).toThrow("rule eof should be running when modify state");
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
  const block = await mk("block", { bufferLength: 4 }).start();
  const drop = await mk("drop", { bufferLength: 4, disableBufferFullDiscard: false }).start();
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

test("a drain runs for a few ms at most: a big backlog is taken over several event-loop turns, all of it", async () => {
  const t = testRuntime();
  const run = await t.rule({ id: "turns", sql: "SELECT n FROM m", options: { bufferLength: 50_000 }, actions: [{ nop: {} }] }, defs).start();
  // Admitted at once (the subscription has room): one backlog of 20,000 rows, 5 ms of work and more.
  for (let n = 0; n < 20_000; n++) expect(t.env.pubsub.publish("rule/in", { n })).toBeUndefined();
  let between = -1;
  setImmediate(() => (between = metric(run, "op_2_project_0_records_in_total") as number));
  await waitFor(() => metric(run, "sink_nop_0_0_records_out_total") === 20_000, "all 20,000 through");
  // The loop ran while the backlog was being taken: a timer, a socket or another rule had its turn.
  expect(between).toBeGreaterThan(0);
  expect(between).toBeLessThan(20_000);
  await run.stop();
});

test("a shared stream's source node is one node: it counts each message once and keeps counting while any rule holds it", async () => {
  const t = testRuntime();
  const shared = streams(`CREATE STREAM sh () WITH (TYPE="memory", DATASOURCE="shared/in", SHARED="true")`);
  const a = await t.rule({ id: "a", sql: "SELECT * FROM sh", actions: [{ nop: {} }] }, shared).start();
  const b = await t.rule({ id: "b", sql: "SELECT * FROM sh", actions: [{ nop: {} }] }, shared).start();
  const seen = (r: typeof a) => metric(r, "op_2_project_0_records_in_total");
  for (let i = 0; i < 3; i++) await t.env.pubsub.publish("shared/in", { n: i });
  await waitFor(() => seen(a) === 3 && seen(b) === 3, "both rules got three");
  expect([metric(a, "source_sh_0_records_in_total"), metric(b, "source_sh_0_records_in_total")]).toEqual([3, 3]);
  // The rule it counted through stops; the node goes on counting, and a rule joining later sees it all.
  await a.stop();
  await t.env.pubsub.publish("shared/in", { n: 3 });
  await waitFor(() => seen(b) === 4, "b got the fourth");
  const c = await t.rule({ id: "c", sql: "SELECT * FROM sh", actions: [{ nop: {} }] }, shared).start();
  expect([metric(b, "source_sh_0_records_in_total"), metric(c, "source_sh_0_records_in_total"), metric(c, "source_sh_0_connection_status")]).toEqual([4, 4, 1]);
  await b.stop();
  await c.stop();
});
