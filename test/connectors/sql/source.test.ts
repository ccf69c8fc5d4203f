/**
 * The `sql` source (rules-and-sinks.md §12) against real SQLite files in a temp dir: incremental
 * pulls by index fields (no duplicate, no gap, across pulls and LIMIT), templateSql, the offset
 * and rewind, value types, bad configurations, and an unreachable database coming back.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Obj } from "../../../lib/value/values.ts";
import { DateTime, UTC } from "../../../lib/value/time.ts";
import { SqlSource } from "../../../lib/connectors/sql/source.ts";
import { waitFor } from "../../helpers/runtime.ts";
import { openOn, rowsOf, type SourceProbe } from "../../helpers/source.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-sql-source-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const opened: SqlSource[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
});

function db(name: string, ddl: string): { db: Database; url: string } {
  const path = join(dir, name);
  const d = new Database(path, { create: true });
  d.run(ddl);
  return { db: d, url: `sqlite:${path}` };
}

async function start(props: Record<string, unknown>): Promise<{ src: SqlSource; p: SourceProbe; got: Obj[] }> {
  const src = new SqlSource(props);
  opened.push(src);
  const p = await openOn(src);
  const got: Obj[] = [];
  const drain = setInterval(() => got.push(...rowsOf(p.take())), 2);
  afterAll(() => clearInterval(drain));
  return { src, p, got };
}

test("internalSqlQueryCfg pulls only rows newer than the last index value: no duplicate, no gap, LIMIT per pull", async () => {
  const { db: d, url } = db("inc.db", "CREATE TABLE events (id INTEGER PRIMARY KEY, v TEXT)");
  const ins = d.prepare("INSERT INTO events (id, v) VALUES (?, ?)");
  for (let i = 1; i <= 5; i++) ins.run(i, `v${i}`);
  const { src, p, got } = await start({ dburl: url, interval: 10, internalSqlQueryCfg: { table: "events", limit: 2, indexFields: [{ indexField: "id", indexValue: 0 }] } });
  await waitFor(() => got.length === 5, "5 rows");
  await Bun.sleep(50); // a fixed wait, to show that more pulls find nothing new
  for (let i = 6; i <= 9; i++) ins.run(i, `v${i}`);
  await waitFor(() => got.length === 9, "9 rows");
  await Bun.sleep(50); // a fixed wait, to show that no duplicate follows
  expect(got.map((r) => r.id)).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n]);
  expect(got[0]).toEqual({ id: 1n, v: "v1" });
  expect(p.exceptions).toEqual([]);
  expect(p.ctx.status.status).toBe(1);
  expect(src.offset(0)).toEqual({ id: 9n });
  expect(src.offset(3)).toEqual({ id: 6n }); // three rows still unconsumed in the bus
  d.close();
});

test("rewind resumes after a saved offset; without indexValue the first pull reads from the start", async () => {
  const { db: d, url } = db("rewind.db", "CREATE TABLE t (seq INTEGER, name TEXT)");
  for (let i = 1; i <= 4; i++) d.run("INSERT INTO t VALUES (?, ?)", [i, `n${i}`]);
  const a = await start({ dburl: url, interval: 0, internalSqlQueryCfg: { table: "t", indexField: "seq" } });
  await waitFor(() => a.got.length === 4, "all rows");
  const b = new SqlSource({ dburl: url, interval: 0, internalSqlQueryCfg: { table: "t", indexField: "seq" } });
  opened.push(b);
  b.rewind({ seq: 2n });
  expect(b.offset(0)).toEqual({ seq: 2n });
  const pb = await openOn(b);
  await waitFor(() => pb.sub.length === 2, "rows after the offset");
  expect(rowsOf(pb.take()).map((r) => r.seq)).toEqual([3n, 4n]);
  expect(() => b.rewind("x")).toThrow("invalid sql source offset: expect an object of index field values");
  d.close();
});

test("templateSqlQueryCfg renders the Go template with the index values of the last row", async () => {
  const { db: d, url } = db("tpl.db", "CREATE TABLE m (ts TEXT, id INTEGER, temp REAL)");
  const ins = d.prepare("INSERT INTO m VALUES (?, ?, ?)");
  ins.run("2024-01-01 00:00:01", 1, 20.5);
  ins.run("2024-01-01 00:00:02", 2, 21);
  ins.run("2023-12-31 23:59:59", 0, 1.5); // older than indexValue: never read
  const { src, got } = await start({
    dburl: url,
    interval: 10,
    templateSqlQueryCfg: {
      templateSql: "SELECT * FROM m WHERE ts > '{{.ts}}' ORDER BY ts ASC LIMIT 1",
      indexFields: [{ indexField: "ts", indexValue: "2024-01-01 00:00:00", indexFieldType: "DATETIME", dateTimeFormat: "YYYY-MM-dd HH:mm:ss" }],
    },
  });
  await waitFor(() => got.length === 2, "2 rows");
  ins.run("2024-01-01 00:00:03", 3, 22.25);
  await waitFor(() => got.length === 3, "3 rows");
  await Bun.sleep(40); // a fixed wait, to show that no further row follows
  expect(got).toEqual([
    { ts: "2024-01-01 00:00:01", id: 1n, temp: 20.5 },
    { ts: "2024-01-01 00:00:02", id: 2n, temp: 21 },
    { ts: "2024-01-01 00:00:03", id: 3n, temp: 22.25 },
  ]);
  expect(src.offset(0)).toEqual({ ts: "2024-01-01 00:00:03" });
  d.close();
});

test("the legacy url property and a DATETIME index value formatted with dateTimeFormat", async () => {
  const { db: d, url } = db("legacy.db", "CREATE TABLE x (id INTEGER, b BLOB, n NULL)");
  d.run("INSERT INTO x VALUES (7, x'0102', NULL)");
  const { got } = await start({ url, interval: 0, internalSqlQueryCfg: { table: "x" } });
  await waitFor(() => got.length === 1, "a row");
  expect(got[0]).toEqual({ id: 7n, b: new Uint8Array([1, 2]), n: null });
  // A datetime index value (from a PostgreSQL/MySQL timestamp column) is rendered with the format.
  const s = new SqlSource({
    dburl: url,
    templateSqlQueryCfg: { templateSql: "SELECT * FROM x WHERE '{{.t}}' > ''", indexFields: [{ indexField: "t", indexFieldType: "DATETIME", dateTimeFormat: "YYYY-MM-dd HH:mm:ss" }] },
  });
  s.rewind({ t: new DateTime(Date.UTC(2024, 0, 2, 3, 4, 5), 0, UTC) });
  expect((s as unknown as { statement(): [string, unknown[]] }).statement()[0]).toBe("SELECT * FROM x WHERE '2024-01-02 03:04:05' > ''");
  await s.close();
  d.close();
});

test("configuration errors", () => {
  expect(() => new SqlSource({ internalSqlQueryCfg: { table: "t" } })).toThrow("dburl should be set");
  expect(() => new SqlSource({ dburl: "oracle://u:p@h/db", internalSqlQueryCfg: { table: "t" } })).toThrow(
    "unknown database scheme oracle in dburl, supported: postgres, mysql, mariadb, sqlite",
  );
  expect(() => new SqlSource({ dburl: "no scheme", internalSqlQueryCfg: { table: "t" } })).toThrow("invalid dburl no scheme: missing database scheme");
  expect(() => new SqlSource({ dburl: "sqlite:", internalSqlQueryCfg: { table: "t" } })).toThrow("invalid dburl sqlite:: missing database file");
  expect(() => new SqlSource({ dburl: "postgres://u:secret@/db", internalSqlQueryCfg: { table: "t" } })).toThrow("invalid dburl postgres://u:******@/db");
  expect(() => new SqlSource({ dburl: "sqlite::memory:" })).toThrow("one of templateSqlQueryCfg.templateSql and internalSqlQueryCfg.table should be set");
  expect(() => new SqlSource({ dburl: "sqlite::memory:", templateSqlQueryCfg: { templateSql: "SELECT {{.x" } })).toThrow("templateSqlQueryCfg.templateSql: template: sql:1:");
  expect(() => new SqlSource({ dburl: "sqlite::memory:", internalSqlQueryCfg: { table: "t", indexFields: [{ indexValue: 1 }] } })).toThrow(
    "internalSqlQueryCfg.indexFields: indexField should be set",
  );
  expect(() => new SqlSource({ dburl: "sqlite::memory:", internalSqlQueryCfg: { table: "t", limit: "3" } })).toThrow("'limit' expected type 'int'");
});

test("an unreachable database is a source exception and a disconnection; the next pull reconnects", async () => {
  const staging = join(dir, "staging");
  const target = join(dir, "missing");
  mkdirSync(staging);
  const d = new Database(join(staging, "late.db"), { create: true });
  d.run("CREATE TABLE t (id INTEGER)");
  d.run("INSERT INTO t VALUES (1), (2)");
  d.close();
  const { p, got } = await start({ dburl: `sqlite:${join(target, "late.db")}?mode=rw`, interval: 20, internalSqlQueryCfg: { table: "t", indexField: "id" } });
  await waitFor(() => p.exceptions.length > 0, "a failed pull");
  expect(p.exceptions[0]).toBe("sql source: unable to open database file");
  expect(p.ctx.status.status).toBe(-1);
  renameSync(staging, target);
  await waitFor(() => got.length === 2, "rows after the database appeared");
  expect(got.map((r) => r.id)).toEqual([1n, 2n]);
  expect(p.ctx.status.status).toBe(1);
});

test("a statement error is a source exception and the rule goes on", async () => {
  const { url } = db("err.db", "CREATE TABLE ok (id INTEGER)");
  const { p } = await start({ dburl: url, interval: 0, internalSqlQueryCfg: { table: "nosuch" } });
  await waitFor(() => p.exceptions.length === 1, "the exception");
  expect(p.exceptions[0]).toBe("sql source: no such table: nosuch");
});
