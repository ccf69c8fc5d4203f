/** The protobuf codec and the schema registry (rules-and-sinks.md §13.5, rest-api.md §14.4). */
import { describe, expect, test } from "bun:test";
import protobuf from "protobufjs";
import { RowError } from "../../lib/errors.ts";
import { checkFormat, SchemaRegistry } from "../../lib/formats/schema-registry.ts";
import { createDecoder } from "../../lib/formats/decode.ts";
import { createEncoder } from "../../lib/formats/encode.ts";
import type { Obj } from "../../lib/value/values.ts";

const ALL = `syntax = "proto3";
package demo;
enum Color { RED = 0; GREEN = 1; BLUE = 2; }
message Inner { string label = 1; repeated int64 ids = 2; }
message All {
  double d = 1;
  float f = 2;
  int32 i32 = 3;
  int64 i64 = 4;
  uint32 u32 = 5;
  uint64 u64 = 6;
  sint32 s32 = 7;
  sint64 s64 = 8;
  fixed32 fx32 = 9;
  fixed64 fx64 = 10;
  sfixed32 sf32 = 11;
  sfixed64 sf64 = 12;
  bool flag = 13;
  string text = 14;
  bytes raw = 15;
  Color color = 16;
  Inner inner = 17;
  repeated Inner items = 18;
  repeated string tags = 19;
  map<string, int64> counts = 20;
  map<int64, string> byId = 21;
  oneof choice { string name = 22; int32 number = 23; }
}
message Tree { string v = 1; repeated Tree kids = 2; }
`;

function registry(): SchemaRegistry {
  const r = new SchemaRegistry();
  r.set({ name: "all", content: ALL, file: "", version: "" });
  return r;
}

const FULL: Obj = {
  d: 1.5,
  f: 0.25,
  i32: -7n,
  i64: 9007199254740993n,
  u32: 4294967295n,
  u64: 18446744073709551615n,
  s32: -2147483648n,
  s64: -9223372036854775808n,
  fx32: 3n,
  fx64: 12345678901234567n,
  sf32: -3n,
  sf64: 9223372036854775807n,
  flag: true,
  text: "héllo",
  raw: new Uint8Array([0, 1, 255]),
  color: 2n,
  inner: { label: "in", ids: [1n, -1n] },
  items: [{ label: "a", ids: [] }, { label: "b", ids: [3n] }],
  tags: ["x", "y"],
  counts: { a: 1n, b: -9223372036854775807n },
  byId: { "-5": "neg", "9007199254740993": "big" },
  name: "chosen",
};

describe("protobuf codec", () => {
  test("every scalar kind, nested, repeated, map, enum and oneof survive an encode/decode round trip", () => {
    const r = registry();
    const bytes = r.encoder("all.All")(FULL);
    expect(bytes).toBeInstanceOf(Uint8Array);
    const row = r.decoder("all.All")(bytes);
    expect(row).toEqual(FULL);
  });

  test("int64 values beyond 2^53 stay exact in both directions", () => {
    const r = registry();
    const T = r.message("all.All");
    // Written by protobufjs itself from decimal strings: floe must read the exact integers.
    const wire = T.encode({ i64: "9007199254740993", u64: "18446744073709551615", s64: "-9223372036854775808" }).finish();
    const row = r.decoder("all.All")(wire);
    expect(row!.i64).toBe(9007199254740993n);
    expect(row!.u64).toBe(18446744073709551615n);
    expect(row!.s64).toBe(-9223372036854775808n);
    const back = T.decode(r.encoder("all.All")({ i64: 9007199254740993n })) as unknown as { i64: { toString(): string } };
    expect(back.i64.toString()).toBe("9007199254740993");
  });

  test("an empty message decodes to proto defaults; unset messages and oneof members are left out", () => {
    const row = registry().decoder("all.All")(new Uint8Array(0));
    expect(row).toEqual({
      d: 0, f: 0, i32: 0n, i64: 0n, u32: 0n, u64: 0n, s32: 0n, s64: 0n, fx32: 0n, fx64: 0n, sf32: 0n, sf64: 0n,
      flag: false, text: "", raw: new Uint8Array(0), color: 0n, items: [], tags: [], counts: {}, byId: {},
    });
  });

  test("floats from JSON rows encode into integer fields (truncated), enums also by name", () => {
    const r = registry();
    const row = r.decoder("all.All")(r.encoder("all.All")({ i32: 41.9, i64: 12, color: "GREEN", d: 3n }));
    expect(row).toMatchObject({ i32: 41n, i64: 12n, color: 1n, d: 3 });
  });

  test("recursive messages decode to nested maps", () => {
    const r = new SchemaRegistry();
    r.set({ name: "t", content: ALL, file: "", version: "" });
    const T = r.message("t.Tree");
    const wire = T.encode({ v: "root", kids: [{ v: "a", kids: [{ v: "a1" }] }, { v: "b" }] }).finish();
    expect(r.decoder("t.Tree")(wire)).toEqual({ v: "root", kids: [{ v: "a", kids: [{ v: "a1", kids: [] }] }, { v: "b", kids: [] }] });
  });

  test("a value that does not fit its field is a row error naming the field", () => {
    const enc = registry().encoder("all.All");
    const err = (row: Obj) => {
      try {
        enc(row);
      } catch (e) {
        return e;
      }
      return undefined;
    };
    expect(err({ i64: "abc" })).toEqual(new RowError("invalid value for int64 field i64: string(abc)"));
    expect(err({ flag: 1n })).toEqual(new RowError("invalid value for bool field flag: int64(1)"));
    expect(err({ inner: 5 })).toEqual(new RowError("invalid value for Inner field inner: float64(5)"));
    expect(err({ tags: "x" })).toEqual(new RowError("invalid value for repeated string field tags: string(x)"));
    expect(err({ color: "PINK" })).toEqual(new RowError("invalid value for enum field color: PINK is not a value of Color"));
    expect(() => enc([{ a: 1 }] as never)).toThrow();
  });

  test("bytes that are not the message are a row error", () => {
    const dec = registry().decoder("all.All");
    let e: unknown;
    try {
      dec(new Uint8Array([0xff, 0xff, 0xff]));
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(RowError);
    expect((e as RowError).message).toStartWith("fail to decode protobuf message All: ");
  });
});

describe("schema registry", () => {
  test("schema ids resolve to messages, with eKuiper's error for a missing schema", () => {
    const r = registry();
    expect(r.message("all.Inner").name).toBe("Inner");
    expect(() => r.message("nope.Inner")).toThrow("schema type protobuf id nope not found in registry");
    expect(() => r.message("all.Missing")).toThrow("message type Missing not found in schema all");
    expect(() => r.message("all")).toThrow("invalid schemaId: all, expect <schemaName>.<MessageName>");
    expect(() => r.message("a.b.c")).toThrow("invalid schemaId: a.b.c");
  });

  test("a schema may import another registered schema and Google's well-known types", () => {
    const r = new SchemaRegistry();
    r.set({ name: "base", content: 'syntax = "proto3"; message Point { int32 x = 1; int32 y = 2; }', file: "", version: "" });
    const text = 'syntax = "proto3"; import "base.proto"; import "google/protobuf/timestamp.proto"; message Shape { repeated Point pts = 1; google.protobuf.Timestamp at = 2; }';
    r.check("shape", text);
    r.set({ name: "shape", content: text, file: "", version: "" });
    const enc = r.encoder("shape.Shape");
    expect(r.decoder("shape.Shape")(enc({ pts: [{ x: 1n, y: 2n }], at: { seconds: 5n, nanos: 0n } }))).toEqual({ pts: [{ x: 1n, y: 2n }], at: { seconds: 5n, nanos: 0n } });
    expect(() => r.check("bad", 'syntax = "proto3"; import "missing.proto"; message A { int32 a = 1; }')).toThrow("bad.proto: cannot find imported file missing.proto");
  });

  test("a .proto that does not parse or resolve is refused with protobufjs's reason", () => {
    const r = new SchemaRegistry();
    expect(() => r.check("x", "message { }")).toThrow(/^x\.proto: illegal/);
    expect(() => r.check("x", 'syntax = "proto3"; message A { Unknown u = 1; }')).toThrow("x.proto: no such Type or Enum 'Unknown' in Type .A");
  });

  test("decoders and encoders come from FORMAT/SCHEMAID and format/schemaId", () => {
    const r = registry();
    const def = { name: "s", kind: "stream" as const, fields: null, options: { FORMAT: "PROTOBUF", SCHEMAID: "all.Inner" }, statement: "" };
    const dec = createDecoder(def, { schemas: r });
    const enc = createEncoder("protobuf", { delimiter: ",", hasHeader: false, fields: undefined, schemaId: "all.Inner" }, r);
    expect(dec(enc({ label: "z", ids: [7n] }) as Uint8Array)).toEqual({ label: "z", ids: [7n] });
    expect(() => createDecoder({ ...def, options: { FORMAT: "protobuf", SCHEMAID: "gone.Inner" } }, { schemas: r })).toThrow("schema type protobuf id gone not found in registry");
    expect(() => createDecoder({ ...def, options: { FORMAT: "custom" } }, { schemas: r })).toThrow("floe does not load Go plugins");
    expect(() => checkFormat(r, "protobuf", "all.Nope")).toThrow("message type Nope not found in schema all");
    expect(() => checkFormat(r, "json", undefined)).not.toThrow();
  });

  test("the schema's package qualifies message names, which resolve unqualified", () => {
    const r = registry();
    expect(r.message("all.All").fullName).toBe(".demo.All");
    expect(protobuf.util.Long).toBeDefined();
  });
});
