/** The value model's Go renderings and conversions (sql.md §0.3, §0.4; functions.md §0.6). */
import { describe, expect, test } from "bun:test";
import { decodeTupleJson } from "../../lib/io/formats/json-tuple.ts";
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
