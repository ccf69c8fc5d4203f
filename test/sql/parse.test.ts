/** The SQL front end: precedence, lexer quirks, output names, and eKuiper's error texts with positions. */
import { describe, expect, test } from "bun:test";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { ParseError } from "../../lib/errors.ts";
import { parseStatement } from "../../lib/sql/parse.ts";
import { renderExpr } from "../../lib/sql/render.ts";
import cases from "../../fixtures/sql/parse.json";

const functions = createFunctionRegistry();

interface Case {
  name: string;
  sql: string;
  render?: string;
  where?: string;
  names?: string[];
  err?: string;
  line?: number;
  column?: number;
}

describe("parse", () => {
  test.each((cases as Case[]).map((c) => [c.name, c] as const))("%s", (_n, c) => {
    if (c.err !== undefined) {
      let err: unknown;
      try {
        parseStatement(c.sql, functions);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ParseError);
      const pe = err as ParseError;
      expect(pe.message).toBe(c.err);
      if (c.line !== undefined) expect([pe.line, pe.column]).toEqual([c.line, c.column!]);
      return;
    }
    const s = parseStatement(c.sql, functions);
    if (s.kind !== "select") throw new Error("not a select");
    if (c.render !== undefined) expect(renderExpr(s.fields[0]!.expr)).toBe(c.render);
    if (c.where !== undefined) expect(renderExpr(s.where!)).toBe(c.where);
    if (c.names !== undefined) expect(s.fields.map((f) => f.name)).toEqual(c.names);
  });
});

describe("statement shapes", () => {
  test("CREATE STREAM types, defaults and typed options", () => {
    const s = parseStatement('CREATE STREAM demo (a BIGINT DEFAULT "0x1F", b ARRAY(STRUCT(c FLOAT)),) WITH (DATASOURCE="t", SHARED="true", RETAIN_SIZE="3", KIND="Lookup", TYPE="memory", KEY="a");', functions);
    expect(s).toMatchObject({
      kind: "create",
      streamKind: "stream",
      name: "demo",
      fields: [{ name: "a", type: "bigint", default: 31n }, { name: "b", type: { array: { struct: [{ name: "c", type: "float" }] } } }],
      options: { DATASOURCE: "t", SHARED: true, RETAIN_SIZE: 3, KIND: "lookup", TYPE: "memory", KEY: "a" },
    });
  });

  test("commas between options are optional and a trailing or doubled comma is accepted", () => {
    expect(parseStatement('CREATE STREAM s () WITH (TYPE="httppull" DATASOURCE="pull")', functions)).toMatchObject({ options: { TYPE: "httppull", DATASOURCE: "pull" } });
    expect(parseStatement('CREATE TABLE t () WITH (TYPE="file", KIND="scan", )', functions)).toMatchObject({ options: { TYPE: "file", KIND: "scan" } });
    expect(parseStatement('CREATE STREAM s () WITH (, TYPE="mqtt",, FORMAT="json" SHARED=TRUE)', functions)).toMatchObject({ options: { TYPE: "mqtt", FORMAT: "json", SHARED: true } });
  });

  test("a schemaless stream has null fields", () => {
    expect(parseStatement('CREATE TABLE t () WITH (TYPE="file")', functions)).toMatchObject({ kind: "create", streamKind: "table", fields: null });
  });

  test("SHOW, DESCRIBE, DROP", () => {
    expect(parseStatement("show streams", functions)).toEqual({ kind: "show", what: "streams" });
    expect(parseStatement("DESCRIBE TABLE t", functions)).toEqual({ kind: "describe", streamKind: "table", name: "t" });
    expect(parseStatement("DROP STREAM `my-s` extra words", functions)).toEqual({ kind: "drop", streamKind: "stream", name: "my-s" });
  });

  test("text after the first ; is ignored", () => {
    const s = parseStatement("SELECT a FROM s; this is not SQL", functions);
    expect(s.kind).toBe("select");
  });

  test("window functions keep FILTER and OVER", () => {
    const s = parseStatement('SELECT count(*) FROM s GROUP BY SLIDINGWINDOW(ss, 10) FILTER (WHERE a > 1) OVER (WHEN b = "x")', functions);
    if (s.kind !== "select") throw new Error("not a select");
    const w = s.groupBy[0]!;
    expect(w.kind === "call" && w.filter !== undefined && w.over?.when !== undefined).toBe(true);
  });
});
