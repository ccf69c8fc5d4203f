/**
 * The compile budget (lib/value/compile-budget.ts) as each compiler applies it: protobuf schemas
 * (the pre-scan and the registry), SQL, graph rules, templates and UDF source are refused past
 * their limit with a CompileBudgetError naming the setting, and accepted at it; the limits come
 * from kuiper.yaml and the environment.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { fromDoc, loadKuiperConfig } from "../../lib/config/index.ts";
import { applyEnv } from "../../lib/config/env.ts";
import { CompileBudgetError, TooLargeError } from "../../lib/errors.ts";
import { compileScript } from "../../lib/functions/js-udf.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { scanProto } from "../../lib/formats/proto-scan.ts";
import { parseProto } from "../../lib/formats/protobuf.ts";
import { SchemaRegistry } from "../../lib/formats/schema-registry.ts";
import { checkTemplateBudget, compileTemplate } from "../../lib/template/index.ts";
import { planGraph } from "../../lib/plan/graph.ts";
import { parseSelect } from "../../lib/sql/parse.ts";
import { compileLimits, DEFAULT_COMPILE_LIMITS, setCompileLimits, type CompileLimits } from "../../lib/value/compile-budget.ts";
import { deepSql, deepTemplate, hugeGraph, wideProto } from "../hostile/compile-cases.ts";

const functions = createFunctionRegistry();

/** Runs with `over` replacing some defaults. */
function withLimits(over: Partial<CompileLimits>): void {
  setCompileLimits({ ...DEFAULT_COMPILE_LIMITS, ...over });
}
afterEach(() => {
  setCompileLimits(DEFAULT_COMPILE_LIMITS);
});

/** The CompileBudgetError `f` throws (fails when it throws anything else or nothing). */
function refusal(f: () => unknown): CompileBudgetError {
  try {
    f();
  } catch (e) {
    if (e instanceof CompileBudgetError) return e;
    throw e;
  }
  throw new Error("not refused");
}

describe("protobuf", () => {
  test("a message past the field limit is refused with its name and count, before protobufjs parses it", () => {
    // The trailing garbage would be protobufjs's syntax error: the budget answers first.
    const e = refusal(() => parseProto("w.proto", wideProto(8000) + "garbage {", () => undefined));
    expect(e.message).toBe("w.proto: message W has 8000 fields, more than the limit of 512 (basic.compileLimits.protoFields)");
    expect(e.limit).toBe("protoFields");
    expect(e).toBeInstanceOf(TooLargeError);
  });

  test("a message at the field limit parses", () => {
    const { root } = parseProto("w.proto", wideProto(512), () => undefined);
    expect(root.lookupType("W").fieldsArray.length).toBe(512);
  });

  test("oneof members count to their message, nested messages and enums count apart, options and comments do not count", () => {
    withLimits({ protoFields: 3 });
    const ok = `syntax = "proto3";
      // int64 commented = 9; int64 more = 10;
      message A {
        option deprecated = true;
        reserved 7, 8;
        string s = 1 [json_name = "x;y{z}"]; /* int64 hidden = 11; */
        oneof o { int64 a = 2; int64 b = 3; }
        message B { int64 c = 1; int64 d = 2; int64 e = 3; }
        enum E { Z = 0; O = 1; T = 2; }
      }`;
    expect(() => scanProto("ok.proto", ok)).not.toThrow();
    expect(() => parseProto("ok.proto", ok, () => undefined)).not.toThrow();
    expect(refusal(() => scanProto("a.proto", ok.replace("int64 b = 3;", "int64 b = 3; int64 c = 4;"))).message).toBe(
      "a.proto: message A has 4 fields, more than the limit of 3 (basic.compileLimits.protoFields)",
    );
    expect(refusal(() => scanProto("e.proto", ok.replace("T = 2;", "T = 2; F = 3;"))).message).toBe("e.proto: enum E has 4 values, more than the limit of 3 (basic.compileLimits.protoFields)");
  });

  test("a proto2 group's fields count to the group, as protobufjs builds it as a message", () => {
    withLimits({ protoFields: 3 });
    const group = (n: number) => `syntax = "proto2"; message M { optional group G = 1 { ${Array.from({ length: n }, (_, i) => `optional int64 g${i} = ${i + 1};`).join(" ")} } }`;
    expect(() => parseProto("g.proto", group(3), () => undefined)).not.toThrow();
    expect(refusal(() => scanProto("g.proto", group(4))).message).toBe("g.proto: message G has 4 fields, more than the limit of 3 (basic.compileLimits.protoFields)");
  });

  test("declarations of a file, nesting and size have their own limits", () => {
    withLimits({ protoDeclarations: 10 });
    const many = Array.from({ length: 6 }, (_, i) => `message M${i} { int64 a = 1; }`).join("\n");
    expect(refusal(() => scanProto("m.proto", many)).message).toBe("m.proto has 12 messages, enums, fields and values, more than the limit of 10 (basic.compileLimits.protoDeclarations)");
    withLimits({ protoDepth: 4 });
    const deep = `${"message N { ".repeat(5)}${"}".repeat(5)}`;
    expect(refusal(() => scanProto("n.proto", deep)).message).toBe("n.proto has 5 levels of nested blocks, more than the limit of 4 (basic.compileLimits.protoDepth)");
    expect(() => scanProto("n.proto", `${"message N { ".repeat(4)}${"}".repeat(4)}`)).not.toThrow();
    setCompileLimits(DEFAULT_COMPILE_LIMITS);
    const big = wideProto(300_000);
    expect(refusal(() => scanProto("big.proto", big)).message).toBe(`big.proto has ${Buffer.byteLength(big)} bytes, more than the limit of 262144 (basic.compileLimits.protoBytes)`);
  });

  test("an imported file passes the same scan", () => {
    const e = refusal(() => parseProto("a.proto", 'syntax = "proto3"; import "b.proto"; message A { int64 x = 1; }', (p) => (p === "b.proto" ? wideProto(600) : undefined)));
    expect(e.message).toBe("b.proto: message W has 600 fields, more than the limit of 512 (basic.compileLimits.protoFields)");
  });

  test("a schema checked at upload is not parsed again for CREATE STREAM or a decoder: the registry keeps the parse", () => {
    const reg = new SchemaRegistry();
    const entry = { name: "w", content: wideProto(10), file: "", version: "" };
    const next = reg.with([entry]);
    next.check("w", entry.content);
    reg.adopt(next, [entry]);
    // The same message object as the check parsed: no second parse.
    expect(reg.message("w.W")).toBe(next.message("w.W"));
    expect(reg.fields("w.W").length).toBe(10);
    // A change drops every parse (imports cross schemas).
    reg.set({ ...entry, content: wideProto(11) });
    expect(reg.message("w.W")).not.toBe(next.message("w.W"));
    expect(reg.fields("w.W").length).toBe(11);
  });
});

describe("SQL", () => {
  test("brackets nested past the limit are refused before the parser recurses; quoted brackets do not count", () => {
    const e = refusal(() => parseSelect(`SELECT ${"(".repeat(300)}1${")".repeat(300)} FROM s`, functions));
    expect(e.message).toBe("the SQL statement nests too deeply: more than 256 levels of nested expressions (basic.compileLimits.sqlDepth)");
    expect(() => parseSelect(`SELECT "${"(".repeat(1000)}" AS x FROM s`, functions)).not.toThrow();
    expect(() => parseSelect(`SELECT ${"(".repeat(200)}1${")".repeat(200)} FROM s`, functions)).not.toThrow();
  });

  test("nesting without brackets (operators in operators) is refused by the walk of the parsed statement", () => {
    withLimits({ sqlDepth: 20 });
    expect(refusal(() => parseSelect(`SELECT a${" + a".repeat(40)} FROM s`, functions)).limit).toBe("sqlDepth");
    expect(refusal(() => parseSelect(deepSql(30), functions)).limit).toBe("sqlDepth");
    expect(() => parseSelect(`SELECT a + b * 2, CASE WHEN a > 1 THEN abs(b) ELSE 0 END AS c FROM s WHERE a > 0 AND b < 3`, functions)).not.toThrow();
  });

  test("the statement length is the budget's sqlLength", () => {
    withLimits({ sqlLength: 100 });
    const sql = `SELECT ${"a, ".repeat(40)}b FROM s`;
    expect(refusal(() => parseSelect(sql, functions)).message).toBe(`the SQL statement is ${sql.length} characters long, more than the limit of 100`);
  });
});

describe("graph rules, templates, UDF source", () => {
  test("a graph past the node limit is refused before any node is planned", () => {
    const e = refusal(() => planGraph(hugeGraph(60), new Map(), { functions } as never));
    expect(e.message).toBe("the graph has 62 nodes, more than the limit of 50 (basic.compileLimits.graphNodes)");
  });

  test("a template nested past the limit, or past the size limit, is refused; at the limit it renders", () => {
    expect(refusal(() => compileTemplate(deepTemplate(65))).message).toBe("template sink nests too deeply: more than 64 levels of blocks and parentheses (basic.compileLimits.templateDepth)");
    expect(refusal(() => compileTemplate(`{{ ${"(".repeat(70)}.a${")".repeat(70)} }}`)).limit).toBe("templateDepth");
    expect(compileTemplate(deepTemplate(64))({ a: true })).toBe("x");
    const big = "{{.a}}".repeat(3000);
    expect(refusal(() => compileTemplate(big)).message).toBe("template sink has 18000 bytes, more than the limit of 16384 (basic.compileLimits.templateBytes)");
  });

  test("a sink's properties are checked at rule creation: budget refusals throw, other template errors wait for the sink", () => {
    expect(refusal(() => checkTemplateBudget({ nop: { dataTemplate: deepTemplate(100) } })).limit).toBe("templateDepth");
    expect(refusal(() => checkTemplateBudget([{ rest: { headers: { h: deepTemplate(100) } } }])).limit).toBe("templateDepth");
    expect(() => checkTemplateBudget({ dataTemplate: "{{ .a " })).not.toThrow();
  });

  test("a long template parses in time linear in its length", () => {
    // Each action used to look up its line from the start of the text: 20,000 actions took 2 s.
    withLimits({ templateBytes: 1 << 20 });
    const t = compileTemplate("{{.a}}\n".repeat(20_000));
    expect(t({ a: 1 }).length).toBe(40_000);
  });

  test("a UDF source past the limit is refused before the sandbox parses it", async () => {
    withLimits({ udfBytes: 1000 });
    const script = `function big() { return "${"x".repeat(2000)}"; }`;
    const err = await compileScript({ id: "big", description: "", script, isAgg: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CompileBudgetError);
    expect((err as Error).message).toBe(`the script of javascript function big has ${script.length} bytes, more than the limit of 1000 (basic.compileLimits.udfBytes)`);
  });
});

describe("configuration", () => {
  test("basic.compileLimits in kuiper.yaml and KUIPER__BASIC__COMPILELIMITS__* set the limits; the rest keep their defaults", async () => {
    const doc = applyEnv({ basic: { compilelimits: { protofields: 1000, graphnodes: "bad" } } }, "KUIPER", { KUIPER__BASIC__COMPILELIMITS__SQLDEPTH: "64" });
    const limits = fromDoc(doc).basic.compileLimits;
    expect(limits).toEqual({ ...DEFAULT_COMPILE_LIMITS, protoFields: 1000, sqlDepth: 64 });
    expect((await loadKuiperConfig(undefined, {})).basic.compileLimits).toEqual(DEFAULT_COMPILE_LIMITS);
  });

  test("setCompileLimits replaces the limits in force and returns the previous ones", () => {
    const before = setCompileLimits({ ...DEFAULT_COMPILE_LIMITS, protoFields: 5000, protoDeclarations: 5000 });
    expect(before).toBe(DEFAULT_COMPILE_LIMITS);
    expect(compileLimits().protoFields).toBe(5000);
    expect(() => scanProto("w.proto", wideProto(4000))).not.toThrow();
  });
});
