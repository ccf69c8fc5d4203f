import { describe, expect, test } from "bun:test";
import { RowError } from "../../lib/errors.ts";
import { createDecoder } from "../../lib/formats/decode.ts";
import { bytesTooDeep, DEPTH_ERROR, MAX_JSON_DEPTH, textTooDeep, valueTooDeep } from "../../lib/value/json-depth.ts";
import { decodeEnvelopeJson, decodeTupleJson } from "../../lib/formats/json-tuple.ts";
import type { StreamDef } from "../../lib/plan/streams.ts";

/** `n` objects nested in one another around `inner`. */
const nest = (n: number, inner = "1") => '{"a":'.repeat(n) + inner + "}".repeat(n);
/** The same in arrays. */
const nestArr = (n: number, inner = "1") => "[".repeat(n) + inner + "]".repeat(n);
const enc = (s: string) => new TextEncoder().encode(s);

// fastjson's depth: the top-level value is at 1, so a scalar inside 300 containers is at 301.
const cases: [label: string, text: string, deep: boolean][] = [
  ["299 objects around a scalar pass", nest(299), false],
  ["300 objects around a scalar are too deep", nest(300), true],
  ["300 objects with an empty innermost pass", nest(299, "{}"), false],
  ["300 objects with an empty innermost and blanks pass", nest(299, "{ \n }"), false],
  ["301 objects with an empty innermost are too deep", nest(300, "{}"), true],
  ["arrays count like objects", nestArr(300), true],
  ["arrays below the limit pass", nestArr(299), false],
  ["mixed arrays and objects", "[".repeat(150) + nest(150) + "]".repeat(150), true],
  ["50,000 deep (the issue's payload)", nest(50_000), true],
  ["brackets inside strings do not nest", `{"s":"${"[{".repeat(1000)}"}`, false],
  ["escaped quotes do not end a string", `{"s":"\\"${"[".repeat(1000)}"}`, false],
  ["an escaped backslash before a quote ends the string", `{"s":"\\\\","t":"${"[".repeat(1000)}"}`, false],
  ["a string does not hide what follows it", `{"s":"\\\\",${'"t":['.repeat(300)}1${"]".repeat(300)}}`, true],
  ["many siblings are wide, not deep", JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ i, v: [i] }))), false],
  ["short payloads are never scanned", "[[[[", false],
];

describe("nesting limit", () => {
  test.each(cases)("%s", (_label, text, deep) => {
    expect(bytesTooDeep(enc(text))).toBe(deep);
    expect(textTooDeep(text)).toBe(deep);
    if (text.length < 1_000_000) {
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch {
        return;
      }
      expect(valueTooDeep(v)).toBe(deep);
    }
  });

  test("the limit is eKuiper's 300", () => {
    expect(MAX_JSON_DEPTH).toBe(300);
    expect(DEPTH_ERROR).toBe("cannot parse JSON: too big depth for the nested JSON; it exceeds 300");
  });
});

const schemaless: StreamDef = { name: "s", kind: "stream", fields: null, options: { FORMAT: "json" } } as unknown as StreamDef;

describe("decoders refuse deep payloads as a decode error", () => {
  test("the json stream decoder throws a RowError (counted, the rule goes on)", () => {
    const dec = createDecoder(schemaless);
    let err: unknown;
    try {
      dec(enc(nest(50_000)));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RowError);
    expect((err as RowError).message).toBe(DEPTH_ERROR);
    expect(dec(enc(nest(299)))).toHaveProperty("a");
  });

  test("with useInt64ForWholeNumber too", () => {
    const dec = createDecoder(schemaless, { useInt64ForWholeNumber: true });
    expect(() => dec(enc(nest(300)))).toThrow(DEPTH_ERROR);
  });

  test("pipe mode's tuple decoder (its exact parser recurses) refuses it", () => {
    expect(() => decodeTupleJson(nest(50_000))).toThrow(DEPTH_ERROR);
    // The exact parser (a whole-valued float) and intify both meet only shallow values.
    expect(() => decodeTupleJson(nest(50_000, "1.0"))).toThrow(DEPTH_ERROR);
    expect(decodeTupleJson(nest(299, "7"))).toBeDefined();
  });

  test("replay envelopes too", () => {
    expect(() => decodeEnvelopeJson(`{"ts":1,"data":${nest(50_000)}}`, () => null)).toThrow(DEPTH_ERROR);
  });
});
