/** Stream/table statements: result texts, errors, DESCRIBE renderings, persistence (sql.md §2.3–2.4). */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { StreamCatalog } from "../../lib/store/stream-catalog.ts";
import { describeJson } from "../../lib/store/describe.ts";
import { Kv } from "../../lib/store/kv.ts";

const functions = createFunctionRegistry();

const open = (dir = mkdtempSync(join(tmpdir(), "floe-cat-"))) => ({ dir, kv: Kv.open(dir) });

const DEMO =
  'CREATE STREAM demo (id bigint DEFAULT 10, name string DEFAULT "unknown", arr array(bigint), obj struct(a bigint, b string)) WITH (DATASOURCE="demo", FORMAT="JSON", TYPE="mqtt")';

test("statements answer eKuiper's texts", () => {
  const { kv } = open();
  const c = new StreamCatalog(kv, functions);
  expect(c.exec("SHOW STREAMS")).toBe("No stream definitions are found.");
  expect(c.exec(DEMO)).toBe("Stream demo is created.");
  expect(c.exec('CREATE TABLE t () WITH (DATASOURCE="t.json", TYPE="file")')).toBe("Table t is created.");
  expect(c.exec("SHOW STREAMS")).toBe("demo");
  expect(c.exec("SHOW TABLES")).toBe("t");
  expect(c.exec("EXPLAIN STREAM demo")).toBe("TO BE SUPPORTED");
  expect(c.exec("DESCRIBE STREAM demo")).toBe(
    "Fields\n" + "-".repeat(80) + "\nid\tbigint\tDEFAULT\t10\nname\tstring\tDEFAULT\tunknown\narr\tarray(bigint)\nobj\tstruct(a bigint, b string)\n\nDATASOURCE: demo\nFORMAT: JSON\nTYPE: mqtt\n",
  );
  expect(c.exec("DROP TABLE t")).toBe("Table t is dropped.");
});

test.each([
  [DEMO, "Create stream fails: Item demo already exists."],
  ["DESCRIBE STREAM nope", "Describe stream fails, nope is not found."],
  ["DESCRIBE TABLE demo", "Describe table fails, table demo is not found."],
  ["DROP STREAM nope", "Drop stream fails: stream nope is not found."],
  ["SELECT * FROM demo", "Invalid stream statement: SELECT * FROM demo"],
  ["CREATE STREAM `a b` () WITH ()", "id 'a b' contains invalid characters: only alphanumeric, hyphens and underscores are allowed"],
])("%s fails with %s", (sql, message) => {
  const c = new StreamCatalog(open().kv, functions);
  c.exec(DEMO);
  expect(() => c.exec(sql)).toThrow(message);
});

test("replace checks name, temp, SHARED and version", () => {
  const c = new StreamCatalog(open().kv, functions);
  c.exec('CREATE STREAM s () WITH (DATASOURCE="s", VERSION="2")');
  expect(() => c.replace("s", 'CREATE STREAM x () WITH (DATASOURCE="s")', "stream")).toThrow("Replace s fails: the sql statement must update the s source.");
  expect(() => c.replace("s", 'CREATE STREAM s () WITH (DATASOURCE="s", TEMP="true")', "stream")).toThrow("Replace s fails: cannot replace with temp option.");
  expect(() => c.replace("s", 'CREATE STREAM s () WITH (DATASOURCE="s", SHARED="true", VERSION="3")', "stream")).toThrow("do not support to change stream SHARED option");
  expect(() => c.replace("s", 'CREATE STREAM s () WITH (DATASOURCE="s", VERSION="1")', "stream")).toThrow("source s already exists with version (2), new version (1) is lower");
  expect(c.replace("s", 'CREATE STREAM s () WITH (DATASOURCE="z", VERSION="3")', "stream")).toBe("Stream s is replaced.");
});

test("definitions and temp streams come back after a reopen", () => {
  const { dir, kv } = open();
  const c = new StreamCatalog(kv, functions);
  c.exec(DEMO);
  c.exec('CREATE STREAM tmp () WITH (DATASOURCE="x", TEMP="true")');
  c.exec('CREATE STREAM a () WITH (DATASOURCE="a")');
  kv.close();
  const again = new StreamCatalog(Kv.open(dir), functions);
  expect(again.names("stream")).toEqual(["a", "demo", "tmp"]);
  expect(describeJson(again.get("demo")!)).toEqual({
    Name: "demo",
    StreamFields: [
      { FieldType: "bigint", Name: "id", DefaultClause: "10" },
      { FieldType: "string", Name: "name", DefaultClause: '"unknown"' },
      { FieldType: { Type: "array", ElementType: "bigint" }, Name: "arr" },
      { FieldType: { Type: "struct", Fields: [{ FieldType: "bigint", Name: "a" }, { FieldType: "string", Name: "b" }] }, Name: "obj" },
    ],
    Options: { datasource: "demo", format: "JSON", type: "mqtt" },
    StreamType: 0,
    Statement: null,
  });
});
