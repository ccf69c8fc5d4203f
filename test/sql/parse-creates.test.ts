/** A streams file (`floe run --streams`): CREATE statements only, parsed with positions. */
import { expect, test } from "bun:test";
import "../../lib/functions/index.ts";
import { ParseError } from "../../lib/errors.ts";
import { parseCreates } from "../../lib/sql/parse.ts";

test("every CREATE STREAM/TABLE of the file, in order, with comments and a missing last semicolon", () => {
  const text = `-- devices
CREATE STREAM demo (temperature FLOAT) WITH (TYPE="mqtt", DATASOURCE="t/#");
/* a lookup table */ CREATE TABLE devices () WITH (TYPE="memory", DATASOURCE="d", KIND="lookup", KEY="id")`;
  const creates = parseCreates(text);
  expect(creates.map((c) => [c.name, c.streamKind])).toEqual([
    ["demo", "stream"],
    ["devices", "table"],
  ]);
  expect(creates[0]!.options.TYPE).toBe("mqtt");
  expect(creates[1]!.options.KIND).toBe("lookup");
});

test("an empty file holds no statements", () => {
  expect(parseCreates("")).toEqual([]);
  expect(parseCreates("-- nothing\n")).toEqual([]);
});

test("a SELECT in a streams file is an error at its position", () => {
  const err = (() => {
    try {
      parseCreates('CREATE STREAM demo () WITH (TYPE="stdin");\nSELECT * FROM demo');
    } catch (e) {
      return e;
    }
  })();
  expect(err).toBeInstanceOf(ParseError);
  expect((err as ParseError).message).toBe("a streams file holds only CREATE STREAM and CREATE TABLE statements");
  expect((err as ParseError).line).toBe(2);
});

test("a malformed CREATE is the parser's error at the statement's line", () => {
  expect(() => parseCreates('CREATE STREAM demo () WITH (TYPE="stdin");\nCREATE STREAM x () WITH (TYPE=);')).toThrow(ParseError);
});
