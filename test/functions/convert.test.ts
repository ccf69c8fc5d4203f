import { describe, expect, test } from "bun:test";
import { DateTime } from "../../lib/value/time.ts";
import type { Value } from "../../lib/value/values.ts";
import type { Expr } from "../../lib/sql/ast.ts";
import { bool, bytes, call, cmp, col, int, num, plus, str, unit, validate } from "./invoke-helpers.ts";

type Case = [name: string, args: Value[], want: Value | { err: string }];

const err = (fn: string, m: string) => ({ err: `call func ${fn} error: ${m}` });
const castErr = (m: string) => err("cast", `not supported type conversion, got error ${m}`);

const cases: Case[] = [
  // cast to bigint: toIntAll, floats truncated, Go integer syntax
  ["cast", [1.2, "bigint"], 1n],
  ["cast", [101.5, "bigint"], 101n],
  ["cast", [-1.7, "bigint"], -1n],
  ["cast", [5n, "bigint"], 5n],
  ["cast", ["0x1A", "bigint"], 26n],
  ["cast", ["0b11", "bigint"], 3n],
  ["cast", ["017", "bigint"], 15n],
  ["cast", ["1_000", "bigint"], 1000n],
  ["cast", [true, "bigint"], 1n],
  ["cast", [" 1", "bigint"], castErr("cannot convert string( 1) to int")],
  ["cast", ["1.5", "bigint"], castErr("cannot convert string(1.5) to int")],
  ["cast", [[1n], "bigint"], castErr("cannot convert []interface {}([1]) to int")],
  // float
  ["cast", [1n, "float"], 1],
  ["cast", ["1e3", "float"], 1000],
  ["cast", ["inf", "float"], Infinity],
  ["cast", ["0x1p-2", "float"], 0.25],
  ["cast", ["1_0.5", "float"], 10.5],
  ["cast", ["abc", "float"], castErr("cannot convert string(abc) to float64")],
  // string: floats never in exponent form
  ["cast", [1.2, "string"], "1.2"],
  ["cast", [1e21, "string"], "1000000000000000000000"],
  ["cast", [1n, "string"], "1"],
  ["cast", [true, "string"], "true"],
  ["cast", [bytes("hi"), "string"], "hi"],
  ["cast", [[1n, "a"], "string"], "[1 a]"],
  // boolean
  ["cast", [1n, "boolean"], true],
  ["cast", [0, "boolean"], false],
  ["cast", ["1", "boolean"], true],
  ["cast", ["true", "boolean"], true],
  ["cast", ["yes", "boolean"], castErr('strconv.ParseBool: parsing "yes": invalid syntax')],
  ["cast", [[1n], "boolean"], castErr("cannot convert []interface {}([1]) to bool")],
  // bytea: base64 when it decodes, else the UTF-8 bytes
  ["cast", ["Ynl0ZWE=", "bytea"], bytes("bytea")],
  ["cast", ["hello", "bytea"], bytes("hello")],
  ["cast", ["abcd", "bytea"], new Uint8Array([0x69, 0xb7, 0x1d])],
  ["cast", [bytes("x"), "bytea"], bytes("x")],
  ["cast", [1n, "bytea"], err("cast", "cannot convert int64(1) to bytea")],
  // null policy, including empty arrays [quirk]; run-time type parameter checks
  ["cast", [null, "bigint"], null],
  ["cast", [[], "string"], null],
  ["cast", [1n, 5n], err("cast", "expect string type for type parameter")],
  ["cast", [1n, "bool"], err("cast", "unknow type, only support bigint, float, string, boolean and datetime")],
  ["cast", [true, "datetime"], err("cast", "unsupported type to convert to timestamp true")],

  ["to_json", ["abc"], '"abc"'],
  ["to_json", [{ b: 1n, a: [1n, 2n] }], '{"a":[1,2],"b":1}'],
  ["to_json", ["<&>"], '"\\u003c\\u0026\\u003e"'],
  ["to_json", [1.5], "1.5"],
  ["to_json", [null], null],
  ["to_json", [[]], null],
  ["to_json", [{}], null],
  ["to_json", [NaN], err("to_json", "fail to convert NaN to json")],
  ["to_json", [[1n, Infinity]], err("to_json", "fail to convert [1 +Inf] to json")],

  ["parse_json", ['"foo"'], "foo"],
  ["parse_json", ['{"a":1,"a":2}'], { a: 2 }],
  ["parse_json", ["[1, 2.5]"], [1, 2.5]],
  ["parse_json", [bytes('{"k":true}')], { k: true }],
  ["parse_json", [null], null],
  ["parse_json", ["null"], null],
  ["parse_json", [12n], err("parse_json", "fail to convert 12 to string")],
  ["parse_json", ["key1"], err("parse_json", "fail to parse json: invalid character 'k' looking for beginning of value")],
  ["parse_json", [""], err("parse_json", "fail to parse json: unexpected end of JSON input")],
  ["parse_json", ["{"], err("parse_json", "fail to parse json: unexpected end of JSON input")],
  ["parse_json", ["1 x"], err("parse_json", "fail to parse json: invalid character 'x' after top-level value")],
  ["parse_json", ["{a:1}"], err("parse_json", "fail to parse json: invalid character 'a' looking for beginning of object key string")],
  ["parse_json", ['{"a" 1}'], err("parse_json", "fail to parse json: invalid character '1' after object key")],
  ["parse_json", ['{"a":1 "b"}'], err("parse_json", "fail to parse json: invalid character '\"' after object key:value pair")],
  ["parse_json", ["[1 2]"], err("parse_json", "fail to parse json: invalid character '2' after array element")],
  ["parse_json", ["01"], err("parse_json", "fail to parse json: invalid character '1' after top-level value")],
  ["parse_json", ["-x"], err("parse_json", "fail to parse json: invalid character 'x' in numeric literal")],
  ["parse_json", ["1.x"], err("parse_json", "fail to parse json: invalid character 'x' after decimal point in numeric literal")],
  ["parse_json", ["tru!"], err("parse_json", "fail to parse json: invalid character '!' in literal true (expecting 'e')")],
  ["parse_json", ['"a\nb"'], err("parse_json", "fail to parse json: invalid character '\\n' in string literal")],
  ["parse_json", ['"\\x"'], err("parse_json", "fail to parse json: invalid character 'x' in string escape code")],
  ["parse_json", ["1e999"], err("parse_json", "fail to parse json: json: cannot unmarshal number 1e999 into Go value of type float64")],

  // chr returns the code point number [code≠docs]
  ["chr", [65n], 65n],
  ["chr", [65.7], 65n],
  ["chr", ["a"], 97n],
  ["chr", [""], null],
  ["chr", ["é"], err("chr", "Parameter length cannot larger than 1.")],
  ["chr", ["ab"], err("chr", "Parameter length cannot larger than 1.")],
  ["chr", [true], err("chr", "Only bigint, float and string type can be convert to char type.")],
  ["chr", [null], null],

  ["encode", ["hello", "base64"], "aGVsbG8="],
  ["encode", ["", "base64"], ""],
  ["encode", [bytes("x"), "base64"], err("encode", "Only string type can be encoded.")],
  ["decode", ["aGVsbG8=", "base64"], bytes("hello")],
  ["decode", ["aGVs\r\nbG8=", "base64"], bytes("hello")],
  ["decode", ["aGVsbG8", "base64"], err("decode", "fail to decode base64 string: illegal base64 data at input byte 4")],
  ["decode", ["ab!d", "base64"], err("decode", "fail to decode base64 string: illegal base64 data at input byte 2")],
  ["decode", ["aGVsbG8=x", "base64"], err("decode", "fail to decode base64 string: illegal base64 data at input byte 8")],
  ["decode", [1n, "base64"], err("decode", "Only string type can be decoded.")],

  // trunc rounds half away from zero [code≠docs]
  ["trunc", [3.1415, 2n], 3.14],
  ["trunc", [2.675, 2n], 2.68], // 2.675 * 100 is exactly 267.5 in float64
  ["trunc", [1.005, 2n], 1],
  ["trunc", [-2.5, 0n], -3],
  ["trunc", [1234.5, -2n], 1200],
  ["trunc", [5n, 2n], 5],
  ["trunc", ["a", 1n], err("trunc", "cannot convert string(a) to float64")],
  ["trunc", [1.5, 1.0], err("trunc", "The 2nd parameter must be int value.")],

  ["isnull", [null], true],
  ["isnull", [[]], false],
  ["isnull", [{}], false],
  ["isnull", [0n], false],
  ["coalesce", [null, "dd", "1"], "dd"],
  ["coalesce", [null, null], null],
  ["coalesce", [[], "x"], []],
  ["cardinality", [[1n, null]], 2n],
  ["cardinality", ["abc"], 0n],
  ["cardinality", [null], 0n],

  ["hex2dec", ["ff"], 255n],
  ["hex2dec", ["0x10"], 16n],
  ["hex2dec", ["-ff"], -255n],
  ["hex2dec", ["7fffffffffffffff"], 9223372036854775807n],
  ["hex2dec", ["0X10"], err("hex2dec", "invalid hexadecimal value: 0X10")],
  ["hex2dec", ["1_0"], err("hex2dec", "invalid hexadecimal value: 1_0")],
  ["hex2dec", ["8000000000000000"], err("hex2dec", "invalid hexadecimal value: 8000000000000000")],
  ["hex2dec", [16n], err("hex2dec", "invalid input type: 16 please input hex string")],
  ["dec2hex", [16n], "0x10"],
  ["dec2hex", [255n], "0xff"],
  ["dec2hex", [-16n], "0x-10"],
  ["dec2hex", [16.0], "0x10"],
  ["dec2hex", ["16"], err("dec2hex", "cannot convert string(16) to int")],
  ["dec2hex", [16.5], err("dec2hex", "cannot convert float64(16.5) to int")],
];

describe("conversion functions", () => {
  test.each(cases)("%s(%p)", (name, args, want) => {
    expect(call(name, args)).toEqual(want);
  });

  test("cast to datetime reads numbers as epoch milliseconds", () => {
    const got = call("cast", [1541152486013n, "datetime"]);
    expect(got).toBeInstanceOf(DateTime);
    expect((got as DateTime).ms).toBe(1541152486013);
  });
});

type VCase = [name: string, args: Expr[], want: string | undefined];

const validators: VCase[] = [
  ["cast", [col("a")], "Expect 2 arguments but found 1."],
  ["cast", [col("a"), str("bigint")], undefined],
  ["cast", [col("a"), str("bytea")], undefined],
  ["cast", [col("a"), col("t")], undefined],
  ["cast", [col("a"), int(1)], "Expect string type for parameter 1"],
  ["cast", [col("a"), cmp()], "Expect string type for parameter 1"],
  ["cast", [col("a"), str("bool")], "Expect one of following value for the 2nd parameter: bigint, float, string, boolean, datetime, bytea."],
  ["to_json", [col("a"), col("b")], "Expect 1 arguments but found 2."],
  ["parse_json", [int(1)], "Expect string type for parameter 1"],
  ["chr", [bool(true)], "Expect int type for parameter 1"],
  ["chr", [num(1.5)], "Expect int type for parameter 1"],
  ["chr", [str("a")], undefined],
  ["encode", [col("a"), col("m")], "Expect string type for parameter 2"],
  ["encode", [int(1), str("base64")], "Expect string type for parameter 1"],
  ["encode", [col("a"), str("hex")], "Only base64 is supported for the 2nd parameter."],
  ["decode", [col("a"), str("base64")], undefined],
  ["trunc", [int(5), unit("SS")], "Expect int type for parameter 2"],
  ["trunc", [str("a"), int(1)], "Expect number - float or int type for parameter 1"],
  ["trunc", [plus(), col("d")], undefined],
  ["coalesce", [], "The arguments should be at least one."],
  ["isnull", [], "Expect 1 arguments but found 0."],
  ["hex2dec", [int(1)], "Expect string type for parameter 1"],
  ["dec2hex", [int(16)], "Expect string type for parameter 1"],
];

describe("conversion validators", () => {
  test.each(validators)("%s %#", (name, args, want) => {
    expect(validate(name, args)).toBe(want);
  });
});
