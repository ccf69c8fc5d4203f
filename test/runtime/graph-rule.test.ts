/** Graph rules run by the runtime (graph-rules.md §11): memory sources and sinks stand in for MQTT. */
import { expect, test } from "bun:test";
import { metric, streams, testRuntime, waitFor } from "../helpers/runtime.ts";
import type { TestRuntime } from "../helpers/runtime.ts";

const IOT = [[1, 20, 30], [2, 31, 40], [1, 35, 50], [2, 20, 30], [1, 80, 90], [2, 45, 20], [1, 10, 90], [2, 12, 30], [1, 65, 35], [2, 55, 32]];

function listen(t: TestRuntime, topic: string): unknown[] {
  const got: unknown[] = [];
  t.env.pubsub.subscribe(topic, (_t, rows) => (got.push(rows), true), () => {});
  return got;
}

const src = (ds: string, extra: Record<string, unknown> = {}) => ({ type: "source", nodeType: "memory", props: { datasource: ds, ...extra } });
const op = (nodeType: string, props: Record<string, unknown>) => ({ type: "operator", nodeType, props });
const sink = (topic: string, extra: Record<string, unknown> = {}) => ({ type: "sink", nodeType: "memory", props: { topic, ...extra } });

test("TC1: a linear graph filters, computes, filters again and picks", async () => {
  const t = testRuntime();
  const out = listen(t, "g1/out");
  const graph = {
    nodes: {
      demo: src("g1/in"),
      humidityFilter: op("filter", { expr: "humidity > 30" }),
      logfunc: op("function", { expr: "log(temperature) as log_temperature" }),
      tempFilter: op("filter", { expr: "log_temperature < 1.6" }),
      pick: op("pick", { fields: ["log_temperature as temp", "humidity"] }),
      mqttout: sink("g1/out"),
    },
    topo: { sources: ["demo"], edges: { demo: ["humidityFilter"], humidityFilter: ["logfunc"], logfunc: ["tempFilter"], tempFilter: ["pick"], pick: ["mqttout"] } },
  };
  const rule = t.rule({ id: "tc1", sql: "", actions: [], graph }, streams());
  await rule.start();
  for (const [, temperature, humidity] of IOT) await t.env.pubsub.publish("g1/in", { temperature, humidity });
  await waitFor(() => out.length === 3, "3 outputs");
  expect(out).toEqual([[{ humidity: 40, temp: Math.log10(31) }], [{ humidity: 50, temp: Math.log10(35) }], [{ humidity: 90, temp: 1 }]]);
  expect(metric(rule, "source_demo_0_records_in_total")).toBe(10);
  expect(metric(rule, "sink_mqttout_0_records_in_total")).toBe(3);
  expect(JSON.stringify(rule.topo())).toBe(
    '{"sources":["source_demo"],"edges":{"op_humidityFilter":["op_logfunc"],"op_logfunc":["op_tempFilter"],"op_mqttout_0_transform":["sink_mqttout"],"op_pick":["op_mqttout_0_transform"],"op_tempFilter":["op_pick"],"source_demo":["op_humidityFilter"]}}',
  );
  await rule.stop();
});
