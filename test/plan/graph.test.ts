/** Graph planning (graph-rules.md §2, §6, §11 TC11–TC13): eKuiper's check order and messages. */
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { describe, expect, test } from "bun:test";
import { planGraph, type GraphHost } from "../../lib/plan/graph.ts";
import { UTC } from "../../lib/value/time.ts";
import { streams } from "../helpers/runtime.ts";

const opts = { env: { now: () => 0, zone: UTC, ruleId: "r", ruleStart: 0 }, zone: UTC, functions: createFunctionRegistry() };
const host: GraphHost = {
  sourceTypeExists: (t) => ["mqtt", "memory", "file"].includes(t),
  checkSink: (t) => {
    if (!["mqtt", "log", "memory"].includes(t)) throw new Error(`sink ${t} is not defined`);
  },
};
const defs = streams(
  "CREATE STREAM src1 (id1 BIGINT, temp BIGINT, name string, myarray array(string)) WITH (DATASOURCE=\"src1\", FORMAT=\"json\")",
  "CREATE TABLE tableInPlanner () WITH (DATASOURCE=\"t\", TYPE=\"file\")",
  "CREATE TABLE lookupT () WITH (DATASOURCE=\"l\", TYPE=\"memory\", KIND=\"lookup\", KEY=\"id\")",
);

type Nodes = Record<string, unknown>;
const abc = { type: "source", nodeType: "mqtt", props: { datasource: "demo" } };
const o = (nodeType: string, props: Record<string, unknown>) => ({ type: "operator", nodeType, props });
const mqtt = { type: "sink", nodeType: "mqtt", props: {} };
const plan = (nodes: Nodes, edges: Record<string, unknown[]>, sources = ["abc"], h: GraphHost = host, o2 = {}) =>
  planGraph({ nodes, topo: { sources, edges } }, defs, { ...opts, ...o2 }, h);

describe("TC11 validation", () => {
  test("a valid fan-out graph plans", () => {
    const p = plan(
      { abc, myfilter: o("filter", { expr: "temperature > 20" }), logfunc: o("function", { expr: "log(temperature) as log_temperature" }), pick: o("pick", { fields: ["log_temperature", "humidity"] }), mqttpv: mqtt, sinfunc: o("function", { expr: "sin(temperature) as sin_temperature" }), mqtt2: mqtt },
      { abc: ["myfilter", "sinfunc"], myfilter: ["logfunc"], logfunc: ["pick"], pick: ["mqttpv"], sinfunc: ["mqtt2"] },
    );
    expect(p.ops.map((x) => x.node)).toEqual(["myfilter", "logfunc", "pick", "sinfunc"]);
    expect(p.sinks.map((s) => s.node)).toEqual(["mqttpv", "mqtt2"]);
    expect(p.sources[0]!.name).toBe("abc");
  });
  test("JSON access and a sink right after the source", () => {
    expect(() => plan({ abc, f: o("filter", { expr: "data.nested.temperature > 20" }), mqtt2: mqtt }, { abc: ["f"], f: ["mqtt2"] })).not.toThrow();
    const src = { type: "source", nodeType: "mqtt", props: { datasource: "demo", format: "json", shared: false } };
    expect(() => plan({ abc: src, log: { type: "sink", nodeType: "log", props: {} } }, { abc: ["log"] })).not.toThrow();
  });
  const cases: [string, () => unknown, string][] = [
    ["undefined edge target", () => plan({ abc, mqtt2: mqtt }, { abc: ["myfilter"] }), "node myfilter is not defined"],
    ["no edges for a source", () => plan({ abc }, {}), "no edge defined for source node abc"],
    ["an aggregate on a row", () => plan({ abc, aggfunc: o("aggfunc", { expr: "avg(temperature) as avg_temperature" }), mqtt2: mqtt }, { abc: ["aggfunc"], aggfunc: ["mqtt2"] }), "node abc output does not match node aggfunc input: input type mismatch, expect collection, got row"],
    [
      "two streams into a join",
      () => plan({ abc, abc2: { type: "source", nodeType: "mqtt", props: { datasource: "demo1" } }, joinop: o("join", { from: "abc", joins: [{ name: "abc2", type: "inner", on: "abc.id = abc2.id" }] }), mqtt2: mqtt }, { abc: ["joinop"], abc2: ["joinop"], joinop: ["mqtt2"] }, ["abc", "abc2"]),
      "join node joinop does not allow multiple stream inputs",
    ],
    [
      "a join after a groupby",
      () =>
        plan(
          { abc, abc2: { type: "source", nodeType: "mqtt", props: { datasource: "demo1" } }, windowop: o("window", { type: "hoppingwindow", unit: "ss", size: 10, interval: 5 }), groupop: o("groupby", { dimensions: ["id", "userId"] }), joinop: o("join", { from: "abc", joins: [{ name: "abc2", type: "inner", on: "abc.id = abc2.id" }] }), mqtt2: mqtt },
          { abc: ["windowop"], abc2: ["windowop"], windowop: ["groupop"], groupop: ["joinop"], joinop: ["mqtt2"] },
          ["abc", "abc2"],
        ),
      "node groupop output does not match node joinop input: collection type mismatch, expect non-grouped collection, got grouped collection",
    ],
    ["an aggfunc parse error", () => plan({ abc, aggfunc: o("aggfunc", { expr: "avg(,temperature) as avg_temperature" }), mqtt2: mqtt }, { abc: ["aggfunc"], aggfunc: ["mqtt2"] }), "parse aggfunc aggfunc with map[expr:avg(,temperature) as avg_temperature] error: found \",\", expected expression."],
    ["a cycle", () => plan({ abc, f1: o("filter", { expr: "a > 1" }), f2: o("filter", { expr: "a > 2" }), mqtt2: mqtt }, { abc: ["f1"], f1: ["f2"], f2: ["f1", "mqtt2"] }), "can't find node "],
    ["a cycle through a source", () => plan({ abc, f1: o("filter", { expr: "a > 1" }), mqtt2: mqtt }, { abc: ["f1"], f1: ["abc", "mqtt2"] }), "graph has a cycle through source node abc"],
    ["slice tuples", () => plan({ abc, mqtt2: mqtt }, { abc: ["mqtt2"] }, ["abc"], { ...host, useSliceTuple: true }), "graph mode does not support slice-tuple mode"],
    ["an unreachable sink", () => plan({ abc, mqtt2: mqtt, lost: mqtt }, { abc: ["mqtt2"] }), "can't find node "],
    ["a source not defined", () => plan({ mqtt2: mqtt }, { abc: ["mqtt2"] }), "source node abc not defined"],
    ["no topo", () => planGraph({ nodes: { abc } }, defs, opts, host), "runtime error: invalid memory address or nil pointer dereference"],
    ["non-switch with ports", () => plan({ abc, k1: mqtt, k2: mqtt }, { abc: [["k1"], ["k2"]] }), "node abc is not a switch node but have multiple output"],
    ["more switch ports than cases", () => plan({ abc, sw: o("switch", { cases: ["a > 1"] }), k1: mqtt, k2: mqtt }, { abc: ["sw"], sw: [["k1"], ["k2"]] }), "runtime error: index out of range [1] with length 1"],
    ["a non-string in a port", () => plan({ abc, k1: mqtt }, { abc: [["k1", 5]] }), "invalid edge toNode [k1 5]"],
    ["two inputs into a filter", () => plan({ abc, abc2: abc, f: o("filter", { expr: "a > 1" }), k: mqtt }, { abc: ["f"], abc2: ["f"], f: ["k"] }, ["abc", "abc2"]), "operator f of type filter does not allow multiple inputs"],
    ["an unknown sink", () => plan({ abc, k: { type: "sink", nodeType: "kafka", props: {} } }, { abc: ["k"] }), "sink kafka is not defined"],
    ["an unknown source type", () => plan({ abc: { type: "source", nodeType: "zmq", props: {} }, k: mqtt }, { abc: ["k"] }), "parse source abc with map[] error: source type zmq not found"],
  ];
  test.each(cases)("%s", (_n, f, msg) => expect(f).toThrow(msg));
});

describe("TC12 referenced streams and tables", () => {
  const demo = (props: Record<string, unknown>, nodeType = "mqtt") => ({ type: "source", nodeType, props });
  const log = { type: "sink", nodeType: "log", props: {} };
  test("a stream is named after the stream", () => {
    const p = plan({ demo: demo({ sourceName: "src1" }), log }, { demo: ["log"] }, ["demo"]);
    expect(p.sources[0]!.name).toBe("src1");
  });
  const cases: [string, Record<string, unknown>, string, string][] = [
    ["type mismatch", { sourceName: "src1" }, "file", "parse source demo with map[sourceName:src1] error: source type file does not match the stream type mqtt"],
    ["unknown stream", { sourceName: "unknown" }, "mqtt", "parse source demo with map[sourceName:unknown] error: fail to get stream unknown, please check if stream is created"],
    ["table as stream", { sourceName: "tableInPlanner", sourceType: "stream" }, "file", "parse source demo with map[sourceName:tableInPlanner sourceType:stream] error: table tableInPlanner is not a stream"],
    ["bad source type", { sourceName: "src1", sourceType: "view" }, "mqtt", "parse source demo with map[sourceName:src1 sourceType:view] error: source type view not supported"],
  ];
  test.each(cases)("%s", (_n, props, nodeType, msg) => expect(() => plan({ demo: demo(props, nodeType), log }, { demo: ["log"] }, ["demo"])).toThrow(msg));
  const lookup = { type: "source", nodeType: "memory", props: { sourceName: "lookupT", sourceType: "table" } };
  const join = (from: string) => o("join", { from, joins: [{ name: "lookupT", type: "inner", on: `${from}.deviceKind = lookupT.id` }] });
  test("a lookup join plans to a lookup node named after the table", () => {
    const p = plan({ demo: demo({ sourceName: "src1" }), lookupT: lookup, joinop: join("src1"), log }, { demo: ["joinop"], lookupT: ["joinop"], joinop: ["log"] }, ["demo", "lookupT"]);
    expect(p.ops.map((x) => x.spec.name)).toEqual(["lookupT"]);
    expect(p.sources.map((s) => s.name)).toEqual(["src1"]);
  });
  test("join from a graph node name is not a stream", () => {
    expect(() => plan({ demo: demo({ sourceName: "src1" }), lookupT: lookup, joinop: join("demo"), log }, { demo: ["joinop"], lookupT: ["joinop"], joinop: ["log"] }, ["demo", "lookupT"])).toThrow(
      "parse join joinop with map[from:demo joins:[map[name:lookupT on:demo.deviceKind = lookupT.id type:inner]]] error: join source demo is not a stream",
    );
  });
});

describe("TC13 node props", () => {
  const one = (node: Record<string, unknown>, name = "n") => () => plan({ abc, [name]: node, k: mqtt }, { abc: [name], [name]: ["k"] });
  const cases: [string, Record<string, unknown>, string, string?][] = [
    ["hopping without interval", o("window", { type: "hoppingwindow", unit: "ss", size: 10 }), "parse window conf w with map[size:10 type:hoppingwindow unit:ss] error: hopping window interval must be greater than 0", "w"],
    ["a string size", o("window", { type: "tumblingwindow", unit: "ss", size: "10" }), "parse window conf w with map[size:10 type:tumblingwindow unit:ss] error: 1 error(s) decoding:\n\n* 'size' expected type 'int', got unconvertible type 'string', value: '10'", "w"],
    ["unknown window type", o("window", { type: "foo", size: 5 }), "error: unknown window type foo", "w"],
    ["bad unit", o("window", { type: "tumblingwindow", unit: "xx", size: 5 }), "error: Invalid unit xx", "w"],
    ["size 0", o("window", { type: "tumblingwindow", unit: "ss", size: 0 }), "error: window size 0 is invalid", "w"],
    ["tumbling interval", o("window", { type: "tumblingwindow", unit: "ss", size: 5, interval: 3 }), "error: tumbling window interval must equal to size", "w"],
    ["hopping interval too big", o("window", { type: "hoppingwindow", unit: "ss", size: 5, interval: 6 }), "error: hopping window interval must be less than size", "w"],
    ["count interval too big", o("window", { type: "countwindow", size: 5, interval: 6 }), "error: count window interval must be less than size", "w"],
    ["a filter expr that is a number", o("filter", { expr: 5 }), "parse filter f with map[expr:5] error: expr 5 is not string", "f"],
    ["a filter without expr", o("filter", {}), "parse filter f with map[] error: no expr", "f"],
    ["a function that is not a call", o("function", { expr: "temperature + 1" }), "parse function fn with map[expr:temperature + 1] error: expr temperature + 1 is not ast.Call", "fn"],
    ["groupby without dimensions", o("groupby", { dimensions: [] }), "parse groupby g with map[dimensions:[]] error: groupby must have at least one dimension", "g"],
    ["watermark of an unknown emitter", o("watermark", { emitters: ["nope"] }), "parse watermark wm with map[emitters:[nope]] error: emitter nope does not exist", "wm"],
    ["watermark without emitters", o("watermark", {}), "error: watermark must have at least one emitter", "wm"],
    ["switch without cases", o("switch", { cases: [] }), "parse switch sw with map[cases:[]] error: switch node must have at least one case", "sw"],
    ["a switch case parse error", o("switch", { cases: ["a >"] }), "parse switch sw with map[cases:[a >]] error: parse case 0 error: ", "sw"],
    ["an unknown operator", o("foo", {}), "unknown operator type foo", "x"],
    ["script is not built in", o("script", { script: "function exec(m){return m}" }), "unknown operator type script", "x"],
    ["orderby without sorts", o("orderby", { sorts: [] }), "error: order by statement is empty", "ob"],
    ["a non-list fields", o("pick", { fields: "a" }), "parse pick p with map[fields:a] error: 1 error(s) decoding:\n\n* 'fields': source data must be an array or slice, got string", "p"],
  ];
  test.each(cases)("%s", (_n, node, msg, name) => expect(one(node, name)).toThrow(msg));
  test("node type and edge errors", () => {
    expect(one({ type: "processor", nodeType: "filter", props: {} })).toThrow("unknown node type processor");
    expect(() => plan({ abc, mqtt2: mqtt }, { abc: ["mqtt2"], mqtt2: [] })).toThrow("sink mqtt2 has edge");
    expect(() => plan({ abc, f: o("filter", { expr: "a > 1" }), mqtt2: mqtt }, { abc: ["mqtt2"] })).toThrow("no edge defined for operator node f");
    expect(() => plan({ abc, k: mqtt }, { abc: ["k"] }, ["abc"], host, { isEventTime: true })).not.toThrow();
    expect(() => plan({ abc, w: o("window", { type: "countwindow", size: 3 }), k: mqtt }, { abc: ["w"], w: ["k"] }, ["abc"], host, { isEventTime: true })).toThrow("parse window w with map[size:3 type:countwindow] error: unsupported window type 5");
  });
  test("event time needs TIMESTAMP on a referenced stream", () => {
    const demo = { type: "source", nodeType: "mqtt", props: { sourceName: "src1" } };
    expect(() => plan({ demo, k: mqtt }, { demo: ["k"] }, ["demo"], host, { isEventTime: true })).toThrow("error: preprocessor is set to be event time but stream option TIMESTAMP not found");
  });
});
