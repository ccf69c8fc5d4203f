/** Graph rules run by the runtime (graph-rules.md §11): memory sources and sinks stand in for MQTT. */
import { expect, test } from "bun:test";
import { metric, streams, testRuntime, waitFor } from "../helpers/runtime.ts";
import type { TestRuntime } from "../helpers/runtime.ts";
import type { Obj } from "../../lib/value/values.ts";

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
  const rule = await t.rule({ id: "tc1", sql: "", actions: [], graph }, streams()).start();
  for (const [, temperature, humidity] of IOT) await t.env.pubsub.publish("g1/in", { temperature, humidity });
  await waitFor(() => out.length === 3, "3 outputs");
  // Go's math.Log10 (JS's Math.log10(35) ends in …757).
  expect(out).toEqual([[{ humidity: 40, temp: 1.4913616938342726 }], [{ humidity: 50, temp: 1.5440680443502754 }], [{ humidity: 90, temp: 1 }]]);
  expect(metric(rule, "source_demo_0_records_in_total")).toBe(10);
  expect(metric(rule, "sink_mqttout_0_records_in_total")).toBe(3);
  expect(JSON.stringify(rule.topo())).toBe(
    '{"sources":["source_demo"],"edges":{"op_humidityFilter":["op_logfunc"],"op_logfunc":["op_tempFilter"],"op_mqttout_0_transform":["sink_mqttout"],"op_pick":["op_mqttout_0_transform"],"op_tempFilter":["op_pick"],"source_demo":["op_humidityFilter"]}}',
  );
  await rule.stop();
});

async function runGraph(id: string, graph: unknown, topics: string[], rows: Obj[], wait: (outs: unknown[][]) => boolean, options: Record<string, unknown> = {}) {
  const t = testRuntime();
  const outs = topics.map((tp) => listen(t, tp));
  const rule = await t.rule({ id, sql: "", actions: [], graph, options }, streams()).start();
  for (const r of rows) await t.env.pubsub.publish(`${id}/in`, r);
  await waitFor(() => wait(outs), `outputs of ${id}`);
  return { rule, outs };
}

const iotRows = IOT.map(([, temperature, humidity]) => ({ temperature, humidity }));

test("TC8: a switch sends each row to the port of every case that holds", async () => {
  const graph = (cases: string[], stop: boolean) => ({
    nodes: { abc: src("sw/in"), sw: op("switch", { cases, stopAtFirstMatch: stop }), k1: sink("sw/k1", { sendSingle: true }), k2: sink("sw/k2", { sendSingle: true }) },
    topo: { sources: ["abc"], edges: { abc: ["sw"], sw: [["k1"], ["k2"]] } },
  });
  const a = await runGraph("sw", graph(["temperature > 20", "temperature <= 20"], true), ["sw/k1", "sw/k2"], iotRows, (o) => o[0]!.length === 6 && o[1]!.length === 4);
  expect(a.outs[0]!.map((r) => (r as { temperature: number }).temperature)).toEqual([31, 35, 80, 45, 65, 55]);
  expect(a.outs[1]).toEqual([{ humidity: 30, temperature: 20 }, { humidity: 30, temperature: 20 }, { humidity: 90, temperature: 10 }, { humidity: 30, temperature: 12 }]);
  expect(metric(a.rule, "op_sw_0_records_out_total")).toBe(0);
  expect(a.rule.topo()!.edges["op_name_1"]).toEqual(["op_k2_0_transform"]);
  expect(a.rule.topo()!.edges["op_sw"]).toEqual(["op_k1_0_transform"]);
  await a.rule.stop();
  const b = await runGraph("sw", graph(["temperature > 20", "temperature > 50"], false), ["sw/k1", "sw/k2"], iotRows, (o) => o[0]!.length === 6 && o[1]!.length === 3);
  expect(b.outs[1]!.map((r) => (r as { temperature: number }).temperature)).toEqual([80, 65, 55]);
  await b.rule.stop();
});

test("TC9: a count window with an aggregate and an aggregating pick", async () => {
  const graph = {
    nodes: { abc: src("cw/in"), w: op("window", { type: "countwindow", size: 3 }), agg: op("aggfunc", { expr: "sum(humidity) as s" }), p: op("pick", { fields: ["s"], isAgg: true }), k: sink("cw/out", { sendSingle: true }) },
    topo: { sources: ["abc"], edges: { abc: ["w"], w: ["agg"], agg: ["p"], p: ["k"] } },
  };
  const r = await runGraph("cw", graph, ["cw/out"], iotRows, (o) => o[0]!.length === 3);
  expect(r.outs[0]).toEqual([{ s: 120 }, { s: 140 }, { s: 155 }]);
  await r.rule.stop();
});

test("TC10: orderby sorts with desc (the docs' order key is ignored)", async () => {
  const graph = (sort: Record<string, unknown>) => ({
    nodes: { abc: src("ob/in"), w: op("window", { type: "countwindow", size: 3 }), o: op("orderby", { sorts: [sort] }), p: op("pick", { fields: ["temperature"] }), k: sink("ob/out") },
    topo: { sources: ["abc"], edges: { abc: ["w"], w: ["o"], o: ["p"], p: ["k"] } },
  });
  const a = await runGraph("ob", graph({ field: "temperature", order: "desc" }), ["ob/out"], iotRows.slice(0, 3), (o) => o[0]!.length === 1);
  expect(a.outs[0]).toEqual([[{ temperature: 20 }, { temperature: 31 }, { temperature: 35 }]]);
  await a.rule.stop();
  const b = await runGraph("ob", graph({ field: "temperature", desc: true }), ["ob/out"], iotRows.slice(0, 3), (o) => o[0]!.length === 1);
  expect(b.outs[0]).toEqual([[{ temperature: 35 }, { temperature: 31 }, { temperature: 20 }]]);
  await b.rule.stop();
});

test("fan-out to two branches and two sinks; a grouped filter becomes HAVING", async () => {
  const graph = {
    nodes: {
      abc: src("fo/in"),
      hot: op("filter", { expr: "temperature > 40" }),
      hk: sink("fo/hot", { sendSingle: true }),
      w: op("window", { type: "countwindow", size: 5 }),
      g: op("groupby", { dimensions: ["device_id"] }),
      c: op("aggfunc", { expr: "count(*) as n" }),
      f: op("filter", { expr: "n > 2" }),
      p: op("pick", { fields: ["device_id", "n", "avg(temperature) as t"], isAgg: true }),
      gk: sink("fo/groups"),
    },
    topo: { sources: ["abc"], edges: { abc: ["hot", "w"], hot: ["hk"], w: ["g"], g: ["c"], c: ["f"], f: ["p"], p: ["gk"] } },
  };
  const rows = IOT.map(([device_id, temperature, humidity]) => ({ device_id, temperature, humidity }));
  const r = await runGraph("fo", graph, ["fo/hot", "fo/groups"], rows, (o) => o[0]!.length === 4 && o[1]!.length === 2);
  expect(r.outs[0]!.map((x) => (x as { temperature: number }).temperature)).toEqual([80, 45, 65, 55]);
  expect(r.outs[1]).toEqual([[{ device_id: 1, n: 3n, t: 45 }], [{ device_id: 2, n: 3n, t: 112 / 3 }]]);
  expect(metric(r.rule, "op_f_0_records_out_total")).toBe(2);
  await r.rule.stop();
});

const TS: [number, number, number, number][] = [
  [1, 488632, 22.5, 30], [2, 488652, 27.2, 95], [2, 489152, 27.1, 98], [2, 489652, 26.8, 99], [2, 490152, 26.9, 85],
  [1, 490252, 23.2, 40], [1, 490631, 23.2, 41], [2, 490652, 26.8, 87], [1, 491013, 24.1, 50], [2, 491152, 27.1, 77],
  [1, 491252, 25.1, 65], [1, 491613, 25.2, 67], [2, 491652, 27.3, 77], [1, 491673, 25.3, 70], [1, 492222, 25.3, 70],
];
const tsRow = ([, t, temperature, humidity]: [number, number, number, number]) => ({ ts: 1541152000000 + t, temperature, humidity });

test("TC3: event time, watermark, tumbling window, aggregate and window_end()", async () => {
  const graph = {
    nodes: {
      demo: src("et/in", { timestamp: "ts" }),
      wm: op("watermark", { emitters: ["demo"], sendWatermark: true }),
      roundfunc: op("function", { expr: "round(temperature) as temp" }),
      window: op("window", { type: "tumblingwindow", unit: "ms", size: 600 }),
      avgfunc: op("aggfunc", { expr: "avg(temp) as avg_temp" }),
      pick: op("pick", { fields: ["avg_temp", "humidity", "window_end() as win"] }),
      k: sink("et/out", { sendSingle: true }),
    },
    topo: { sources: ["demo"], edges: { demo: ["wm"], wm: ["roundfunc"], roundfunc: ["window"], window: ["avgfunc"], avgfunc: ["pick"], pick: ["k"] } },
  };
  const r = await runGraph("et", graph, ["et/out"], TS.slice(0, 10).map(tsRow), (o) => o[0]!.length === 4, { isEventTime: true, lateTolerance: 0 });
  expect(r.outs[0]).toEqual([
    { avg_temp: 25.666666666666668, humidity: 30, win: 1541152489200n },
    { avg_temp: 27, humidity: 99, win: 1541152489800n },
    { avg_temp: 25, humidity: 85, win: 1541152490400n },
    { avg_temp: 25, humidity: 41, win: 1541152491000n },
  ]);
  await r.rule.stop();
});

test("TC4: two streams through one watermark and window into a join", async () => {
  const t = testRuntime();
  const out = listen(t, "jn/out");
  const graph = {
    nodes: {
      device1: src("jn/1", { timestamp: "ts" }),
      device2: src("jn/2", { timestamp: "ts" }),
      wm: op("watermark", { emitters: ["device1", "device2"], sendWatermark: true }),
      window: op("window", { type: "tumblingwindow", unit: "ms", size: 600 }),
      joinop: op("join", { from: "device1", joins: [{ name: "device2", type: "inner", on: "abs(device1.ts - device2.ts) < 200" }] }),
      k: sink("jn/out"),
    },
    topo: { sources: ["device1", "device2"], edges: { device1: ["wm"], device2: ["wm"], wm: ["window"], window: ["joinop"], joinop: ["k"] } },
  };
  const rule = await t.rule({ id: "jn", sql: "", actions: [], graph, options: { isEventTime: true, lateTolerance: 0 } }, streams()).start();
  for (const row of TS) await t.env.pubsub.publish(`jn/${row[0]}`, tsRow(row));
  await waitFor(() => out.length === 4, "4 joins");
  const ts = (o: unknown) => (o as { ts: bigint }[]).map((x) => Number(x.ts) - 1541152000000);
  expect(out.map(ts)).toEqual([[488632], [490252], [490631], [491013, 491252]]);
  expect(metric(rule, "op_window_0_records_in_total")).toBe(13);
  expect(rule.topo()!.sources).toEqual(["source_device1", "source_device2"]);
  await rule.stop();
});

test("TC6: hopping window, groupby, count, HAVING, orderby and an aggregating pick", async () => {
  const t = testRuntime();
  const out = listen(t, "go/out");
  const graph = {
    nodes: {
      device1: src("go/1", { timestamp: "ts" }),
      device2: src("go/2", { timestamp: "ts" }),
      wm: op("watermark", { emitters: ["device1", "device2"], sendWatermark: true }),
      window: op("window", { type: "hoppingwindow", unit: "ms", size: 1500, interval: 300 }),
      groupop: op("groupby", { dimensions: ["device_id"] }),
      countop: op("aggfunc", { expr: "count(*)" }),
      filterop: op("filter", { expr: "count > 1" }),
      orderop: op("orderby", { sorts: [{ field: "count", desc: true }] }),
      pick: op("pick", { isAgg: true, fields: ["device_id", "count"] }),
      k: sink("go/out"),
    },
    topo: { sources: ["device1", "device2"], edges: { device1: ["wm"], device2: ["wm"], wm: ["window"], window: ["groupop"], groupop: ["countop"], countop: ["filterop"], filterop: ["orderop"], orderop: ["pick"], pick: ["k"] } },
  };
  const rule = await t.rule({ id: "go", sql: "", actions: [], graph, options: { isEventTime: true, lateTolerance: 0 } }, streams()).start();
  for (const row of TS) await t.env.pubsub.publish(`go/${row[0]}`, { device_id: row[0], ...tsRow(row) });
  await waitFor(() => out.length === 9, "9 windows");
  const pairs = (o: unknown) => (o as { count: bigint; device_id: bigint }[]).map((x) => [Number(x.count), Number(x.device_id)]);
  expect(out.map(pairs)).toEqual([
    [[2, 2]], [[2, 2]], [[3, 2]], [[3, 2]], [[3, 2]],
    [[3, 2], [2, 1]], [[3, 2], [2, 1]], [[4, 1], [3, 2]], [[4, 1], [3, 2]],
  ]);
  expect(metric(rule, "op_window_0_records_in_total")).toBe(13);
  await rule.stop();
});

test("TC7: a lookup join against a memory table fed by another rule, then a filter over both", async () => {
  const t = testRuntime();
  const defs = streams(
    `CREATE STREAM demoStream () WITH (DATASOURCE="lkg/data", FORMAT="json", TYPE="memory")`,
    `CREATE STREAM alertStream () WITH (DATASOURCE="lkg/alert", TYPE="memory")`,
    `CREATE TABLE alertTable () WITH (DATASOURCE="alertVal", TYPE="memory", KIND="lookup", KEY="memKey")`,
  );
  const feeder = await t.rule({ id: "feed", sql: "SELECT * FROM alertStream", actions: [{ memory: { topic: "alertVal", keyField: "memKey", rowkindField: "action", sendSingle: true } }] }, defs).start();
  const out = listen(t, "lkg/out");
  const graph = {
    nodes: {
      demo: { type: "source", nodeType: "memory", props: { sourceType: "stream", sourceName: "demoStream" } },
      alertTable: { type: "source", nodeType: "memory", props: { sourceType: "table", sourceName: "alertTable" } },
      joinop: op("join", { from: "demoStream", joins: [{ name: "alertTable", type: "inner", on: "demoStream.deviceKind = alertTable.memKey" }] }),
      filterOp: op("filter", { expr: "demoStream.value > alertTable.alarm" }),
      pickOp: op("pick", { fields: ["device", "value"] }),
      mqttpv: sink("lkg/out", { sendSingle: true }),
    },
    topo: { sources: ["demo", "alertTable"], edges: { demo: ["joinop"], alertTable: ["joinop"], joinop: ["filterOp"], filterOp: ["pickOp"], pickOp: ["mqttpv"] } },
  };
  const rule = await t.rule({ id: "tc7", sql: "", actions: [], graph }, defs).start();
  const alerts = async (list: [string, number, number?][]) => {
    for (const [action, memKey, alarm] of list) await t.env.pubsub.publish("lkg/alert", alarm === undefined ? { memKey, action } : { memKey, action, alarm });
  };
  const data = async () => {
    for (const [device, deviceKind] of [["device1", 1], ["device12", 2], ["device33", 3], ["device43", 4]] as const) await t.env.pubsub.publish("lkg/data", { deviceKind, device, value: 54 });
  };
  await alerts([["insert", 1, 55], ["insert", 2, 80], ["insert", 3, 20], ["insert", 4, 30]]);
  await waitFor(() => metric(feeder, "sink_memory_0_0_records_out_total") === 4, "the feeder");
  await data();
  await waitFor(() => out.length === 2, "two alarms");
  await alerts([["update", 1, 60], ["delete", 4], ["update", 1, 50], ["delete", 3]]);
  await waitFor(() => metric(feeder, "sink_memory_0_0_records_out_total") === 8, "the feeder");
  await data();
  await waitFor(() => out.length === 3, "three alarms");
  expect(out).toEqual([{ device: "device33", value: 54 }, { device: "device43", value: 54 }, { device: "device1", value: 54 }]);
  expect(metric(rule, "source_demoStream_0_records_in_total")).toBe(8);
  expect(rule.topo()!.edges["op_alertTable"]).toEqual(["op_filterOp"]);
  await rule.stop();
  await feeder.stop();
});
