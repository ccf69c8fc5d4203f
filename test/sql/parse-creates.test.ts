/** A streams file (`floe run --streams`): CREATE statements only, parsed with positions. */
import { expect, test } from "bun:test";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { ParseError } from "../../lib/errors.ts";
import { parseCreates } from "../../lib/sql/parse.ts";

const functions = createFunctionRegistry();

test("every CREATE STREAM/TABLE of the file, in order, with comments and a missing last semicolon", () => {
  const text = `-- devices
CREATE STREAM demo (temperature FLOAT) WITH (TYPE="mqtt", DATASOURCE="t/#");
/* a lookup table */ CREATE TABLE devices () WITH (TYPE="memory", DATASOURCE="d", KIND="lookup", KEY="id")`;
  const creates = parseCreates(text, functions);
  expect(creates.map((c) => [c.name, c.streamKind])).toEqual([
    ["demo", "stream"],
    ["devices", "table"],
  ]);
  expect(creates[0]!.options.TYPE).toBe("mqtt");
  expect(creates[1]!.options.KIND).toBe("lookup");
});

test("an empty file holds no statements", () => {
  expect(parseCreates("", functions)).toEqual([]);
  expect(parseCreates("-- nothing\n", functions)).toEqual([]);
});

test("a SELECT in a streams file is an error at its position", () => {
  const err = (() => {
    try {
      parseCreates('CREATE STREAM demo () WITH (TYPE="stdin");\nSELECT * FROM demo', functions);
    } catch (e) {
      return e;
    }
  })();
  expect(err).toBeInstanceOf(ParseError);
  expect((err as ParseError).message).toBe("a streams file holds only CREATE STREAM and CREATE TABLE statements");
  expect((err as ParseError).line).toBe(2);
});

test("a malformed CREATE is the parser's error at the statement's line", () => {
  expect(() => parseCreates('CREATE STREAM demo () WITH (TYPE="stdin");\nCREATE STREAM x () WITH (TYPE=);', functions)).toThrow(ParseError);
});
