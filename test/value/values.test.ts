/** The value model's Go renderings and conversions (sql.md §0.3, §0.4; functions.md §0.6). */
import { describe, expect, test } from "bun:test";
import { decodeEnvelopeJson, decodeTupleJson } from "../../lib/formats/json-tuple.ts";
import { fmtV, formatFloatPlain, parseGoFloat, parseGoInt, toStrConv, typeValue } from "../../lib/value/values.ts";

/** Values written as JSON text: a whole number is an int64, one with a fraction a float64. */
const v = (json: string) => decodeTupleJson(json);

describe("fmtV is Go's %v", () => {
  test.each([
    ["null", "<nil>"],
    ["true", "true"],
    ["-12", "-12"],
    ["25.5", "25.5"],
    ["3.0", "3"],
    ["1000000.0", "1e+06"],
    ["999999.0", "999999"],
    ["123456.7", "123456.7"],
    ["1000000.5", "1.0000005e+06"],
    ["1541152486013.0", "1.541152486013e+12"],
    ["0.0001", "0.0001"],
    ["0.00001", "1e-05"],
    ['"x"', "x"],
    ['[1, "a", null, 2.5, {"a": 1}]', "[1 a <nil> 2.5 map[a:1]]"],
    ['{"b": [1.5, "x"], "a": null}', "map[a:<nil> b:[1.5 x]]"],
    ["[]", "[]"],
  ])("%s → %s", (json, want) => {
    expect(fmtV(v(json))).toBe(want);
  });

  test("bytes print as decimal byte values", () => {
    expect(fmtV(new Uint8Array([104, 105]))).toBe("[104 105]");
  });
});

describe("toStrConv (cast to string) never uses an exponent", () => {
  test.each([
    ["1000000.0", "1000000"],
    ["0.00001", "0.00001"],
    ["1.5", "1.5"],
    ["1e21", "1000000000000000000000"],
    ["null", ""],
  ])("%s → %s", (json, want) => {
    expect(toStrConv(v(json))).toBe(want);
  });
  test("formatFloatPlain keeps the sign of negative zero", () => {
    expect(formatFloatPlain(-0)).toBe("-0");
  });
});

describe("%T(%v)", () => {
  test.each([
    ["6", "int64(6)"],
    ["55.0", "float64(55)"],
    ['"v8"', "string(v8)"],
    ["null", "<nil>(<nil>)"],
    ["[1, 2]", "[]interface {}([1 2])"],
  ])("%s → %s", (json, want) => {
    expect(typeValue(v(json))).toBe(want);
  });
});

describe("Go number parsing", () => {
  test.each([
    ["0x1A", 26n],
    ["0b11", 3n],
    ["017", 15n],
    ["0o17", 15n],
    ["1_000", 1000n],
    ["-9223372036854775808", -9223372036854775808n],
    [" 1", undefined],
    ["1.5", undefined],
    ["9223372036854775808", undefined],
  ])("ParseInt(%s)", (text, want) => {
    expect(parseGoInt(text)).toBe(want);
  });
  test.each([
    ["1e3", 1000],
    ["inf", Infinity],
    ["-Infinity", -Infinity],
    ["0x1p-2", 0.25],
    ["1_0.5", 10.5],
    ["abc", undefined],
    ["", undefined],
  ])("ParseFloat(%s)", (text, want) => {
    expect(parseGoFloat(text)).toBe(want);
  });
});

describe("tuple JSON keeps int vs float", () => {
  test("whole numbers are int64, exact beyond 2^53", () => {
    expect(v('{"a": 1, "b": 1.0, "c": 9007199254740993, "d": [2, 2.5]}')).toEqual({ a: 1n, b: 1, c: 9007199254740993n, d: [2n, 2.5] });
  });
  test("exponent forms are floats", () => {
    expect(v('{"a": 1e3}')).toEqual({ a: 1000 });
  });
});

describe("tuple JSON: the whole-float scan runs only when an observed value is integral", () => {
  const keep = new Set(["a", "b"]);
  test("kept columns: a whole-valued float stays a float, an int becomes int64", () => {
    expect(decodeTupleJson('{"a": 2.0, "b": 3, "z": 1.5}', keep)).toEqual({ a: 2, b: 3n, z: 1.5 });
    expect(decodeTupleJson('{"a": 2e0, "b": "x"}', keep)).toEqual({ a: 2, b: "x" });
    // Only fractional kept values: no scan, and the result is JSON.parse's.
    expect(decodeTupleJson('{"a": 2.5, "b": -0.25, "z": 7.0}', keep)).toEqual({ a: 2.5, b: -0.25, z: 7 });
    // Beyond 2^53 in a kept column: exact digits.
    expect(decodeTupleJson('{"a": 9007199254740993, "b": 1.0}', keep)).toEqual({ a: 9007199254740993n, b: 1 });
    expect(decodeTupleJson('{"a": [1.0, 2], "b": {"c": 3.0}}', keep)).toEqual({ a: [1, 2n], b: { c: 3 } });
  });
  test("envelopes: data and meta are judged the same way", () => {
    // The envelope's ts is read with Number() (pipe/direct.ts): the exact parser may leave it int64.
    const env = (t: string): Record<string, unknown> => {
      const e = decodeEnvelopeJson(t, () => keep) as Record<string, unknown>;
      return { ...e, ts: Number(e.ts) };
    };
    expect(env('{"ts": 1000, "data": {"a": 1.5, "b": 2.0}}')).toEqual({ ts: 1000, data: { a: 1.5, b: 2 } });
    expect(env('{"ts": 1000.0, "data": {"a": 1.5, "b": 2}}')).toEqual({ ts: 1000, data: { a: 1.5, b: 2n } });
    expect(env('{"ts": 5, "data": {"a": 1.25}, "meta": {"q": 1.0}}')).toEqual({ ts: 5, data: { a: 1.25 }, meta: { q: 1 } });
    expect(env('{"ts": 5, "data": {"a": 1.25}, "meta": {"q": 1}}')).toEqual({ ts: 5, data: { a: 1.25 }, meta: { q: 1n } });
  });
  test("a malformed line with a whole-valued float keeps the exact parser's error text", () => {
    expect(() => decodeTupleJson('{"a": 1.0,')).toThrow("unexpected end of JSON input");
    expect(() => decodeEnvelopeJson('{"data": {"a": 1.0} x', () => null)).toThrow("invalid character 'x' after object key:value pair");
  });
});
