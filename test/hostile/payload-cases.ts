/**
 * Hostile connector payloads for every payload format floe registers (`FORMATS`, lib/sql/create.ts),
 * shared by the fast suite (payloads.test.ts) and the long one (bench/hostile.ts). Each attacked
 * format has one or more streams (schemaless, with a schema), a good payload with the row it must
 * give, and hostile payloads with what eKuiper's rules make of each: a decode error (counted on the
 * `<i>_decoder` node) or a row. A format that cannot be attacked is listed with its reason and with
 * the refusal that proves it.
 */
import protobuf from "protobufjs";
import { MAX_DELIMITED_FIELDS } from "../../lib/formats/decode.ts";
import { CUSTOM_FORMAT_ERROR } from "../../lib/formats/schema-registry.ts";
import { DEPTH_ERROR } from "../../lib/value/json-depth.ts";

const enc = new TextEncoder();
const bytes = (s: string): Uint8Array => enc.encode(s);
const cat = (...parts: (string | number[])[]): Uint8Array => new Uint8Array(parts.flatMap((p) => (typeof p === "string" ? [...enc.encode(p)] : p)));

/** A decode error whose last_exception matches `err`, or the output line (`SELECT *`, JSON) the payload gives. */
export type Outcome = { readonly err: RegExp | string } | { readonly row: string };

export interface HostilePayload {
  readonly name: string;
  readonly payload: Uint8Array;
  readonly want: Outcome;
}

export interface FormatCase {
  /** Unique: names the stream, the rule and the httppush endpoint. */
  readonly id: string;
  readonly format: string;
  /** The stream's schema (`()` for schemaless) and extra WITH options. */
  readonly schema: string;
  readonly options: string;
  readonly good: { readonly payload: Uint8Array; readonly row: string };
  readonly hostile: readonly HostilePayload[];
}

/** The protobuf schema the protobuf streams decode with (registered as `hostile`). */
export const PROTO_SCHEMA = { name: "hostile", content: 'syntax = "proto3";\nmessage M { int64 a = 1; string s = 2; }\nmessage N { N child = 1; int64 v = 2; }\n' };
const proto = protobuf.parse(PROTO_SCHEMA.content, { keepCase: true }).root;
const M = proto.lookupType("M");
const N = proto.lookupType("N");
/** protobufjs gives a Node Buffer, whose `slice` is a view: a plain copy keeps mutators off the case. */
const encodeM = (v: { a: number; s: string }): Uint8Array => new Uint8Array(M.encode(v).finish());

/** `N` nested `depth` deep, the innermost with v = 1 (each level's header is built once, outermost first). */
function nestedN(depth: number): Uint8Array {
  const inner = N.encode({ v: 1 }).finish();
  const heads: number[][] = [];
  let len = inner.length;
  for (let i = 0; i < depth; i++) {
    const h = [0x0a];
    for (let l = len; ; l >>>= 7) {
      h.push((l & 0x7f) | (l > 0x7f ? 0x80 : 0));
      if (l <= 0x7f) break;
    }
    heads.push(h);
    len += h.length;
  }
  return new Uint8Array([...heads.reverse().flat(), ...inner]);
}

/** Seeded bytes that are neither UTF-8 nor any format's framing. */
export function garbage(n: number, seed = 7): Uint8Array {
  const out = new Uint8Array(n);
  let a = seed >>> 0;
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0;
    out[i] = 0x80 | (a >>> 24);
  }
  return out;
}

const INVALID_JSON = /^invalid character in JSON payload: /;
const NOT_OBJECTS = "only map[string]interface{} and []map[string]interface{} is supported";
const MIB = 1024 * 1024;

/** Shared by json streams with or without a schema. */
const JSON_ANY: HostilePayload[] = [
  { name: "truncated", payload: bytes('{"a":1,"s":"x'), want: { err: INVALID_JSON } },
  { name: "arrays nested 400 deep", payload: bytes(`{"a":${"[".repeat(400)}${"]".repeat(400)}}`), want: { err: DEPTH_ERROR } },
  { name: "objects nested 400 deep", payload: bytes(`${'{"a":'.repeat(400)}1${"}".repeat(400)}`), want: { err: DEPTH_ERROR } },
  // The parser's message quotes the byte: the status JSON must still parse (payloads.test.ts reads it).
  { name: "control characters outside a string", payload: cat('{"a":', [0x01, 0x07, 0x0b, 0x7f], "}"), want: { err: INVALID_JSON } },
  { name: "NaN-like text", payload: bytes('{"a":NaN,"s":Infinity}'), want: { err: INVALID_JSON } },
  { name: "empty", payload: new Uint8Array(), want: { err: INVALID_JSON } },
  { name: "binary garbage", payload: garbage(256), want: { err: INVALID_JSON } },
  { name: "a scalar", payload: bytes("42"), want: { err: NOT_OBJECTS } },
  { name: "an array of scalars", payload: bytes("[1,2]"), want: { err: NOT_OBJECTS } },
];

export const FORMAT_CASES: readonly FormatCase[] = [
  {
    id: "json",
    format: "json",
    schema: "()",
    options: "",
    good: { payload: bytes('{"a":7,"s":"ok"}'), row: '{"a":7,"s":"ok"}' },
    hostile: [
      ...JSON_ANY,
      // Go's decoder replaces each invalid byte with U+FFFD, as TextDecoder does.
      { name: "invalid UTF-8 in a string", payload: cat('{"s":"', [0xff, 0xfe, 0xc3], '"}'), want: { row: '{"s":"\uFFFD\uFFFD\uFFFD"}' } },
      { name: "huge numbers", payload: bytes('{"a":123456789012345678901234567890,"b":-1e308}'), want: { row: '{"a":1.2345678901234568e+29,"b":-1e+308}' } },
      { name: "a 1 MiB string", payload: bytes(`{"s":"${"x".repeat(MIB)}"}`), want: { row: `{"s":"${"x".repeat(MIB)}"}` } },
    ],
  },
  {
    id: "json_schema",
    format: "json",
    schema: "(a BIGINT, f FLOAT, s STRING, st STRUCT(x BIGINT), ar ARRAY(BIGINT))",
    options: "",
    good: { payload: bytes('{"a":7,"s":"ok"}'), row: '{"a":7,"s":"ok"}' },
    hostile: [
      ...JSON_ANY,
      { name: "a string for a BIGINT", payload: bytes('{"a":"7"}'), want: { err: "a has wrong type:string, expect:bigint" } },
      { name: "a fraction for a BIGINT", payload: bytes('{"a":1.5}'), want: { err: 'cannot parse int64 from "1.5"' } },
      { name: "past int64 for a BIGINT", payload: bytes('{"a":123456789012345678901234567890}'), want: { err: 'cannot parse int64 from "1.2345678901234568e+29"' } },
      { name: "past float64 for a FLOAT", payload: bytes('{"f":1e400}'), want: { err: "f is out of the float64 range" } },
      { name: "an object for a STRING", payload: bytes('{"s":{"x":1}}'), want: { err: "s has wrong type:object, expect:string" } },
      { name: "an array for a STRUCT", payload: bytes('{"st":[1]}'), want: { err: "st has wrong type:array, expect:struct" } },
      { name: "a string inside an ARRAY(BIGINT)", payload: bytes('{"ar":[1,"x"]}'), want: { err: "ar has wrong type:string, expect:bigint" } },
    ],
  },
  {
    id: "binary",
    format: "binary",
    schema: "()",
    options: "",
    good: { payload: new Uint8Array([1, 2, 3]), row: '{"self":"AQID"}' },
    hostile: [
      { name: "empty", payload: new Uint8Array(), want: { row: '{"self":""}' } },
      { name: "binary garbage", payload: garbage(3), want: { row: `{"self":"${Buffer.from(garbage(3)).toString("base64")}"}` } },
      { name: "1 MiB", payload: garbage(MIB), want: { row: `{"self":"${Buffer.from(garbage(MIB)).toString("base64")}"}` } },
    ],
  },
  {
    id: "delimited",
    format: "delimited",
    schema: "()",
    options: "",
    good: { payload: bytes("1,2,x"), row: '{"col0":"1","col1":"2","col2":"x"}' },
    hostile: [
      { name: "empty", payload: new Uint8Array(), want: { row: '{"col0":""}' } },
      { name: "invalid UTF-8", payload: cat([0xff], ",", [0xfe]), want: { row: '{"col0":"\uFFFD","col1":"\uFFFD"}' } },
      { name: "one very long line (1 MiB, no delimiter)", payload: bytes("y".repeat(MIB)), want: { row: `{"col0":"${"y".repeat(MIB)}"}` } },
      { name: "one very long line of delimiters (1 MiB)", payload: bytes(",".repeat(MIB)), want: { err: `delimited payload has more than ${MAX_DELIMITED_FIELDS} fields` } },
      { name: "JSON, not delimited", payload: bytes('{"a":1}'), want: { row: '{"col0":"{\\"a\\":1}"}' } },
    ],
  },
  {
    id: "delimited_schema",
    format: "delimited",
    schema: "(a STRING, b STRING)",
    options: ', DELIMITER="|"',
    good: { payload: bytes("1|2"), row: '{"a":"1","b":"2"}' },
    hostile: [
      // More columns than the schema names: eKuiper names the rest col<i>.
      { name: "more columns than the schema", payload: bytes("1|2|3"), want: { row: '{"a":"1","b":"2","col2":"3"}' } },
      { name: "binary garbage", payload: garbage(4), want: { row: `{"a":"${new TextDecoder().decode(garbage(4))}"}` } },
    ],
  },
  {
    id: "urlencoded",
    format: "urlencoded",
    schema: "()",
    options: "",
    good: { payload: bytes("a=1&s=ok"), row: '{"a":"1","s":"ok"}' },
    hostile: [
      { name: "empty", payload: new Uint8Array(), want: { row: "{}" } },
      { name: "invalid escapes", payload: bytes("a=%ZZ&s=%"), want: { err: 'invalid URL escape "%ZZ"' } },
      { name: "invalid UTF-8", payload: cat("s=", [0xff]), want: { row: '{"s":"\uFFFD"}' } },
      { name: "one very long line (1 MiB)", payload: bytes(`s=${"z".repeat(MIB)}`), want: { row: `{"s":"${"z".repeat(MIB)}"}` } },
    ],
  },
  {
    id: "protobuf",
    format: "protobuf",
    schema: "()",
    options: `, SCHEMAID="${PROTO_SCHEMA.name}.M"`,
    good: { payload: encodeM({ a: 7, s: "ok" }), row: '{"a":7,"s":"ok"}' },
    hostile: [
      { name: "truncated", payload: encodeM({ a: 7, s: "truncated" }).subarray(0, 5), want: { err: /^fail to decode protobuf message M: / } },
      { name: "a length past the end", payload: new Uint8Array([0x12, 0xff, 0xff, 0xff, 0x0f, 0x61]), want: { err: /^fail to decode protobuf message M: index out of range/ } },
      { name: "binary garbage", payload: garbage(64), want: { err: /^fail to decode protobuf message M: / } },
      { name: "invalid UTF-8 in a string field", payload: new Uint8Array([0x12, 0x02, 0xff, 0xfe]), want: { err: /^fail to decode protobuf message M: / } },
      { name: "wire type 7", payload: new Uint8Array([0x0f]), want: { err: "fail to decode protobuf message M: invalid wire type 7 at offset 1" } },
      // proto3: an empty message is every field at its default.
      { name: "empty", payload: new Uint8Array(), want: { row: '{"a":0,"s":""}' } },
      { name: "JSON, not protobuf", payload: bytes('{"a":1}'), want: { err: /^fail to decode protobuf message M: / } },
    ],
  },
  {
    id: "protobuf_nested",
    format: "protobuf",
    schema: "()",
    options: `, SCHEMAID="${PROTO_SCHEMA.name}.N"`,
    good: { payload: nestedN(2), row: '{"child":{"child":{"v":1},"v":0},"v":0}' },
    hostile: [
      { name: "messages nested 400 deep", payload: nestedN(400), want: { err: "fail to decode protobuf message N: max depth exceeded" } },
      { name: "messages nested 50,000 deep", payload: nestedN(50_000), want: { err: "fail to decode protobuf message N: max depth exceeded" } },
    ],
  },
];

/** Registered formats no payload can reach, each with why and the refusal that shows it. */
export const NOT_ATTACKED: Readonly<Record<string, { readonly reason: string; readonly refusal: string }>> = {
  custom: { reason: "a Go plugin codec: floe refuses the stream, so no payload is ever decoded with it", refusal: CUSTOM_FORMAT_ERROR },
};

/** The stream of `c` on the httppush endpoint `/<id>`. */
export function streamSql(c: FormatCase): string {
  return `CREATE STREAM p_${c.id} ${c.schema} WITH (TYPE="httppush", DATASOURCE="/${c.id}", FORMAT="${c.format}"${c.options})`;
}
