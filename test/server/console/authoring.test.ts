/** The console editor's routes: validate plans without creating, with the CLI's spot, caret and "did you mean"; the catalog for completion. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFloe, type DaemonProc } from "../daemon.ts";

let d: DaemonProc;

beforeAll(async () => {
  d = await startFloe();
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM demo (temperature FLOAT, humidity BIGINT) WITH (TYPE="memory", DATASOURCE="demo", FORMAT="json")' })).status).toBe(201);
});

afterAll(async () => {
  await d?.stop();
});

async function validate(sql: string, kind = "rule"): Promise<Record<string, unknown>> {
  const r = await d.call("POST", "/ui/api/validate", { sql, kind });
  expect(r.status).toBe(200);
  return JSON.parse(r.text) as Record<string, unknown>;
}

test("a good SELECT is valid and nothing is created", async () => {
  expect(await validate("SELECT temperature FROM demo WHERE humidity > 2")).toEqual({ valid: true });
  expect(JSON.parse((await d.call("GET", "/rules")).text)).toEqual([]);
});

test("a misspelt column: eKuiper's message, its place in the text and the close name", async () => {
  const v = await validate("SELECT temperature\nFROM demo WHERE humidty > 2");
  expect(v.message).toBe("unknown field humidty");
  expect([v.line, v.column, v.length]).toEqual([2, 17, 7]);
  expect(v.suggestion).toEqual({ name: "humidity", what: "column" });
  expect(v.detail).toBe("  at sql:2:17\n  2 | FROM demo WHERE humidty > 2\n    |                 ^^^^^^^\n  did you mean humidity? (a column)\n");
});

test("a syntax error carries the parser's line and column; a misspelt stream its name", async () => {
  const p = await validate("SELECT temperature FROM demo WHERE");
  expect(p.valid).toBe(false);
  expect(p.line).toBe(1);
  expect(typeof p.column).toBe("number");
  const s = await validate("SELECT temperature FROM dmeo");
  expect(s.suggestion).toEqual({ name: "demo", what: "stream" });
  expect(s.column).toBe(25);
});

test("a CREATE is checked without being created; a bad one shows where", async () => {
  expect(await validate('CREATE STREAM s2 (a BIGINT) WITH (TYPE="memory", DATASOURCE="x", FORMAT="json")', "stream")).toEqual({ valid: true });
  expect(JSON.parse((await d.call("GET", "/streams")).text)).toEqual(["demo"]);
  const bad = await validate('CREATE STREAM s2 (a BIGINT WITH (TYPE="memory")', "stream");
  expect(bad.valid).toBe(false);
  expect(bad.line).toBe(1);
  expect(String(bad.detail)).toContain("^");
});

test("a body that is not {sql, kind} gets eKuiper's error shape", async () => {
  const r = await d.call("POST", "/ui/api/validate", { sql: 1 });
  expect(r.status).toBe(400);
  expect(JSON.parse(r.text)).toEqual({ error: 1000, message: 'Invalid body: want {"sql": string, "kind": "rule" | "stream"}' });
});

test("the catalog lists each stream with its statement and fields", async () => {
  const c = JSON.parse((await d.call("GET", "/ui/api/catalog")).text) as unknown[];
  expect(c).toEqual([{ name: "demo", kind: "stream", statement: expect.stringContaining("CREATE STREAM demo"), fields: ["temperature", "humidity"] }]);
});
