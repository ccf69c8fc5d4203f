/** A push source's confKey `interval` puts eKuiper's `<n>_ratelimit` node after the source (rules-and-sinks.md §8.1). */
import { expect, test } from "bun:test";
import type { Value } from "../../lib/value/values.ts";
import { metric, streams, testRuntime, waitFor } from "../helpers/runtime.ts";

const defs = streams(
  `CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="rl/in", CONF_KEY="slow")`,
  `CREATE STREAM p () WITH (TYPE="memory", DATASOURCE="rl/in")`,
);

function runtime(interval: unknown) {
  return testRuntime({ confKey: (kind, type, key) => (kind === "sources" && type === "memory" && key === "slow" ? { interval } : undefined) });
}

test("the latest message of each interval goes through; the node is numbered after the source", async () => {
  const t = runtime("300ms");
  const out: Value[] = [];
  t.env.pubsub.subscribe("rl/out", (_t, rows) => (out.push(rows as Value), true), () => {});
  const run = await t.rule({ id: "rl", sql: "SELECT n FROM m WHERE n > 0", actions: [{ memory: { topic: "rl/out", sendSingle: true } }] }, defs).start();
  try {
    expect(Object.keys(run.topo().edges)).toEqual(["op_2_ratelimit", "op_3_filter", "op_4_project", "op_memory_0_0_transform", "source_m"]);
    for (let n = 1; n <= 3; n++) await t.env.pubsub.publish("rl/in", { n });
    await waitFor(() => metric(run, "op_2_ratelimit_0_records_out_total") === 1, "the first interval");
    await waitFor(() => out.length === 1, "the result");
    expect(out).toEqual([{ n: 3 }]);
    expect(metric(run, "op_2_ratelimit_0_records_in_total")).toBe(3);
    // An interval with no new message lets nothing through: a fixed wait over two intervals shows it.
    await Bun.sleep(700);
    expect(metric(run, "op_2_ratelimit_0_records_out_total")).toBe(1);
  } finally {
    await run.stop();
  }
});

test("a source without interval has no rate-limit node; a sub-millisecond one is refused", async () => {
  const plain = await runtime("300ms").rule({ id: "plain", sql: "SELECT n FROM p", actions: [{ nop: {} }] }, defs).start();
  try {
    expect(Object.keys(plain.topo().edges)).toEqual(["op_2_project", "op_nop_0_0_transform", "op_nop_0_1_encode", "source_p"]);
  } finally {
    await plain.stop();
  }
  await expect(runtime("500us").rule({ id: "fast", sql: "SELECT n FROM m", actions: [{ nop: {} }] }, defs).start()).rejects.toThrow("interval should be larger than 1ms");
});

test("a frame merger (eKuiper plugins) is refused with a clear error", async () => {
  const t = testRuntime({ confKey: (kind, _type, key) => (kind === "sources" && key === "slow" ? { interval: "1s", merger: "signal" } : undefined) });
  await expect(t.rule({ id: "merge", sql: "SELECT n FROM m", actions: [{ nop: {} }] }, defs).start()).rejects.toThrow("the rate limit's merger and mergeField are not supported by floe");
});
