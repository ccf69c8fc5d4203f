/**
 * The `sql` sink (rules-and-sinks.md §12) in rules, against real SQLite files in a temp dir:
 * inserts (one row, a batch as one statement, `fields`), rowkind insert/update/delete/upsert by
 * `keyField`, property errors, a failing statement, and the retry while the database is
 * unreachable (every row arrives, in order, once it is back).
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSinkConnector } from "../../../lib/connectors/sinks.ts";
import { MemoryPubSub } from "../../../lib/connectors/memory/pubsub.ts";
import type { RunHandle } from "../../../lib/runtime/rule.ts";
import { metric, streams, testRuntime, waitFor, type TestRuntime } from "../../helpers/runtime.ts";
import { createNetGuard } from "../../../lib/net/guard.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-sql-sink-"));
const rules: RunHandle[] = [];
afterAll(async () => {
  for (const r of rules) await r.stop();
  rmSync(dir, { recursive: true, force: true });
});

const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="sqlsink/in")`);

function table(name: string, ddl: string): { path: string; rows: (sql: string) => unknown[] } {
  const path = join(dir, name);
  const d = new Database(path, { create: true });
  d.run(ddl);
  d.close();
  return {
    path,
    rows: (sql) => {
      const r = new Database(path, { readonly: true });
      try {
        return r.query(sql).all();
      } finally {
        r.close();
      }
    },
  };
}

async function rule(t: TestRuntime, id: string, sink: Record<string, unknown>, sql = "SELECT * FROM s"): Promise<RunHandle> {
  const r = await t.rule({ id, sql, actions: [{ sql: sink }] }, defs).start();
  rules.push(r);
  return r;
}

test("each row is inserted into table; int64, float, string, bool and null columns", async () => {
  const db = table("insert.db", "CREATE TABLE readings (id INTEGER, temp REAL, name TEXT, ok INTEGER, note TEXT)");
  const t = testRuntime();
  const r = await rule(t, "ins", { dburl: `sqlite:${db.path}`, table: "readings" });
  await t.env.pubsub.publish("sqlsink/in", { id: 1n, temp: 20.5, name: "a", ok: true, note: null });
  await t.env.pubsub.publish("sqlsink/in", { id: 9007199254740993n, temp: 3, name: "b'); DROP TABLE readings; --" });
  await waitFor(() => metric(r, "sink_sql_0_0_records_out_total") === 2, "2 sends");
  expect(db.rows("SELECT temp, name, ok, note FROM readings")).toEqual([
    { temp: 20.5, name: "a", ok: 1, note: null },
    { temp: 3, name: "b'); DROP TABLE readings; --", ok: null, note: null },
  ]);
  expect(metric(r, "sink_sql_0_0_connection_status")).toBe(1);
  // The int64 beyond 2^53 is stored exactly.
  const exact = new Database(db.path, { readonly: true, safeIntegers: true });
  expect(exact.query("SELECT id FROM readings").all()).toEqual([{ id: 1n }, { id: 9007199254740993n }]);
  exact.close();
});

test("a batch goes in as one multi-row INSERT; fields choose the columns", async () => {
  const db = table("batch.db", "CREATE TABLE b (n INTEGER, a TEXT)");
  const t = testRuntime();
  const r = await rule(t, "batch", { dburl: `sqlite:${db.path}`, table: "b", fields: ["n"], batchSize: 3 });
  for (let n = 0; n < 6; n++) await t.env.pubsub.publish("sqlsink/in", { n: BigInt(n), a: "x", extra: 1 });
  await waitFor(() => metric(r, "sink_sql_0_0_records_out_total") === 2, "2 batches");
  expect(db.rows("SELECT * FROM b")).toEqual([0, 1, 2, 3, 4, 5].map((n) => ({ n, a: null })));
});

test("rowkindField: insert (also when absent), update and delete by keyField, upsert updates or inserts", async () => {
  const db = table("rowkind.db", "CREATE TABLE dev (id INTEGER PRIMARY KEY, name TEXT, level INTEGER, action TEXT)");
  const t = testRuntime();
  const r = await rule(t, "kind", { dburl: `sqlite:${db.path}`, table: "dev", rowkindField: "action", keyField: "id" });
  const pub = (row: Record<string, unknown>) => t.env.pubsub.publish("sqlsink/in", row as never);
  await pub({ id: 1n, name: "one", level: 1n, action: "insert" });
  await pub({ id: 2n, name: "two", level: 2n });
  await pub({ id: 3n, name: "three", level: 3n, action: "insert" });
  await pub({ id: 2n, name: "TWO", level: 20n, action: "update" });
  await pub({ id: 3n, action: "delete" });
  await pub({ id: 1n, name: "ONE", level: 10n, action: "upsert" });
  await pub({ id: 4n, name: "four", level: 4n, action: "upsert" });
  await pub({ id: 5n, name: "five", action: "update" }); // no such key: nothing
  await waitFor(() => metric(r, "sink_sql_0_0_records_out_total") === 8, "8 sends");
  // The rowkind column is written like any other (eKuiper's).
  expect(db.rows("SELECT * FROM dev ORDER BY id")).toEqual([
    { id: 1, name: "ONE", level: 10, action: "upsert" },
    { id: 2, name: "TWO", level: 20, action: "update" },
    { id: 4, name: "four", level: 4, action: "upsert" },
  ]);
  // Wrong rows are dropped and counted; the sink goes on.
  await pub({ id: 6n, action: "merge" });
  await pub({ name: "nokey", action: "delete" });
  await pub({ id: 7n, action: 1n });
  await waitFor(() => metric(r, "sink_sql_0_0_exceptions_total") === 3, "3 exceptions");
  expect(metric(r, "sink_sql_0_0_last_exception")).toBe("rowkind field action is not a string in data map[action:1 id:7]");
  expect(t.logs.some((l) => l.includes("invalid rowkind merge"))).toBe(true);
  expect(t.logs.some((l) => l.includes("key field id not found in data map[action:delete name:nokey]"))).toBe(true);
});

test("the rows of a batch with rowkind are written in one transaction: a failing row writes none", async () => {
  const db = table("tx.db", "CREATE TABLE k (id INTEGER PRIMARY KEY, v TEXT NOT NULL, op TEXT NOT NULL)");
  const t = testRuntime();
  const r = await rule(t, "tx", { dburl: `sqlite:${db.path}`, table: "k", rowkindField: "op", keyField: "id", batchSize: 2 });
  await t.env.pubsub.publish("sqlsink/in", { id: 1n, v: "a", op: "insert" });
  await t.env.pubsub.publish("sqlsink/in", { id: 2n, v: null, op: "insert" }); // NOT NULL fails
  await t.env.pubsub.publish("sqlsink/in", { id: 3n, v: "c", op: "insert" });
  await t.env.pubsub.publish("sqlsink/in", { id: 4n, v: "d", op: "upsert" });
  await waitFor(() => metric(r, "sink_sql_0_0_records_out_total") === 1 && metric(r, "sink_sql_0_0_exceptions_total") === 1, "one batch written, one failed");
  expect(metric(r, "sink_sql_0_0_last_exception")).toBe("sql sink: NOT NULL constraint failed: k.v");
  expect(db.rows("SELECT * FROM k ORDER BY id")).toEqual([
    { id: 3, v: "c", op: "insert" },
    { id: 4, v: "d", op: "upsert" },
  ]);
});

test("with resendInterval the sink retries while the database is unreachable; all rows arrive in order", async () => {
  const staging = join(dir, "staging");
  const target = join(dir, "later");
  mkdirSync(staging);
  const d = new Database(join(staging, "retry.db"), { create: true });
  d.run("CREATE TABLE q (n INTEGER)");
  d.close();
  const t = testRuntime();
  const r = await rule(t, "retry", { dburl: `sqlite:${join(target, "retry.db")}?mode=rw`, table: "q", resendInterval: 20, sendSingle: true });
  expect(metric(r, "sink_sql_0_0_connection_status")).toBe(-1);
  for (let n = 0; n < 5; n++) await t.env.pubsub.publish("sqlsink/in", { n: BigInt(n) });
  await waitFor(() => (metric(r, "sink_sql_0_0_exceptions_total") as number) >= 3, "failed attempts");
  expect(metric(r, "sink_sql_0_0_last_exception")).toBe("sql sink: unable to open database file");
  expect(metric(r, "sink_sql_0_0_records_out_total")).toBe(0);
  renameSync(staging, target);
  await waitFor(() => metric(r, "sink_sql_0_0_records_out_total") === 5, "5 rows after recovery");
  const rows = new Database(join(target, "retry.db"), { readonly: true }).query("SELECT n FROM q").all();
  expect(rows).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
  expect(metric(r, "sink_sql_0_0_connection_status")).toBe(1);
});

test("sink property errors", () => {
  const mk = (p: Record<string, unknown>) => () => createSinkConnector("sql", p, { pubsub: new MemoryPubSub(), outbound: createNetGuard() });
  expect(mk({ table: "t" })).toThrow("dburl should be set");
  expect(mk({ dburl: "mssql://h/db", table: "t" })).toThrow("unknown database scheme mssql in dburl, supported: postgres, mysql, mariadb, sqlite");
  expect(mk({ dburl: "sqlite::memory:" })).toThrow("property table is required");
  expect(mk({ dburl: "sqlite::memory:", table: "t", rowkindField: "op" })).toThrow("keyField is required when rowkindField is set");
  expect(mk({ url: "sqlite::memory:", table: "t", rowKindField: "op", keyField: "id" })).not.toThrow();
});
