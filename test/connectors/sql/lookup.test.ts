/**
 * The `sql` lookup table (rules-and-sinks.md §12, sql.md §12.5) against a real SQLite file: the
 * key values go in as parameters, several keys AND-ed, integers as int64; a rule joining a stream
 * with it (INNER and LEFT), and a bad dburl failing the rule's start.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeGoJson } from "../../../lib/value/json-encode.ts";
import { createLookupSource } from "../../../lib/connectors/lookups.ts";
import { SqlLookup } from "../../../lib/connectors/sql/lookup.ts";
import { createRuntimeEnv } from "../../../lib/runtime/env.ts";
import type { RunHandle } from "../../../lib/runtime/rule.ts";
import { metric, streams, testRuntime, waitFor, type TestRuntime } from "../../helpers/runtime.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-sql-lookup-"));
const path = join(dir, "lk.db");
const seed = new Database(path, { create: true });
seed.run("CREATE TABLE devices (id INTEGER, region TEXT, name TEXT, factor REAL)");
seed.run("INSERT INTO devices VALUES (1, 'eu', 'one', 1.5), (2, 'eu', 'two', 2), (2, 'us', 'two-us', 2.5)");
seed.close();

const rules: RunHandle[] = [];
afterAll(async () => {
  for (const r of rules) await r.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("a lookup selects the rows whose key columns equal the values, as parameters", async () => {
  const l = createLookupSource("sql", { dburl: `sqlite:${path}`, datasource: "devices" }, createRuntimeEnv({ log: () => {} }));
  expect(l).toBeInstanceOf(SqlLookup);
  await l.open();
  expect(await l.lookup(["id"], [1n])).toEqual([{ id: 1n, region: "eu", name: "one", factor: 1.5 }]);
  expect((await l.lookup(["id"], [2])).map((r) => r.name)).toEqual(["two", "two-us"]);
  expect(await l.lookup(["id", "region"], [2n, "us"])).toEqual([{ id: 2n, region: "us", name: "two-us", factor: 2.5 }]);
  expect(await l.lookup(["region"], ["eu' OR '1'='1"])).toEqual([]);
  await expect(Promise.resolve(l.lookup(["nosuch"], [1n]))).rejects.toThrow("sql lookup: no such column: nosuch");
  await l.close();
  expect(() => new SqlLookup({ dburl: `sqlite:${path}` })).toThrow("datasource(table) is required for sql lookup table");
});

function collect(t: TestRuntime, topic: string): string[] {
  const out: string[] = [];
  t.env.pubsub.subscribe(topic, (_t, rows) => (out.push(encodeGoJson(rows)), true), (retry) => retry());
  return out;
}

test("a rule joins a stream with the sql lookup table (INNER drops a miss, LEFT keeps it)", async () => {
  const defs = streams(
    `CREATE STREAM demo () WITH (TYPE="memory", DATASOURCE="sqllk/demo")`,
    `CREATE TABLE dev () WITH (TYPE="sql", KIND="lookup", DATASOURCE="devices", EXTRA="{\\"dburl\\":\\"sqlite:${path}\\"}")`,
  );
  const t = testRuntime();
  const inner = collect(t, "sqllk/inner");
  const left = collect(t, "sqllk/left");
  const a = await t.rule({ id: "lk_inner", sql: "SELECT demo.id, dev.name, demo.v * dev.factor AS x FROM demo INNER JOIN dev ON demo.id = dev.id AND dev.region = demo.r", actions: [{ memory: { topic: "sqllk/inner" } }] }, defs).start();
  const b = await t.rule({ id: "lk_left", sql: "SELECT demo.id, dev.name FROM demo LEFT JOIN dev ON dev.id = demo.id", actions: [{ memory: { topic: "sqllk/left" } }] }, defs).start();
  rules.push(a, b);
  await t.env.pubsub.publish("sqllk/demo", { id: 2n, r: "us", v: 2n });
  await t.env.pubsub.publish("sqllk/demo", { id: 9n, r: "eu", v: 1n });
  await t.env.pubsub.publish("sqllk/demo", { id: 1n, r: "eu", v: 4n });
  await waitFor(() => inner.length === 2 && left.length === 3, "joined rows");
  expect(inner).toEqual(['[{"id":2,"name":"two-us","x":5}]', '[{"id":1,"name":"one","x":6}]']);
  expect(left).toEqual(['[{"id":2,"name":"two"},{"id":2,"name":"two-us"}]', '[{"id":9}]', '[{"id":1,"name":"one"}]']);
  expect(metric(a, "op_dev_0_records_in_total")).toBe(3);
});

test("a lookup table with a bad dburl fails the rule's start", async () => {
  const defs = streams(
    `CREATE STREAM demo () WITH (TYPE="memory", DATASOURCE="sqllk/demo2")`,
    `CREATE TABLE bad () WITH (TYPE="sql", KIND="lookup", DATASOURCE="devices", EXTRA="{\\"dburl\\":\\"redis://127.0.0.1/0\\"}")`,
  );
  const t = testRuntime();
  const r = t.rule({ id: "lk_bad", sql: "SELECT demo.id FROM demo INNER JOIN bad ON demo.id = bad.id", actions: [{ nop: {} }] }, defs);
  await expect(r.start()).rejects.toThrow("unknown database scheme redis in dburl, supported: postgres, mysql, mariadb, sqlite");
});
