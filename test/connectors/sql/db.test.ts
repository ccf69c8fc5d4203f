/**
 * The sql connector end to end on a real PostgreSQL (127.0.0.1:5432, trust auth, database
 * `test`; CI starts it): a rule's sql sink writes a table, a sql stream reads it incrementally
 * into another rule, a third joins a stream with it as a lookup table; int4/int8 come back as
 * int64, float8 as float, timestamptz as a datetime. Also a closed port: the sink retries.
 */
import { SQL } from "bun";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { encodeGoJson } from "../../../lib/value/json-encode.ts";
import { parseDbUrl } from "../../../lib/connectors/sql/db.ts";
import type { RunHandle } from "../../../lib/runtime/rule.ts";
import { metric, streams, testRuntime, waitFor, type TestRuntime } from "../../helpers/runtime.ts";

const URL = "postgres://postgres@127.0.0.1:5432/test";
const table = `floe_sql_${process.pid}_${Date.now()}`;
let pg: SQL;
const rules: RunHandle[] = [];

beforeAll(async () => {
  pg = new SQL({ url: URL, max: 1 });
  try {
    await pg.unsafe("SELECT 1");
  } catch (e) {
    throw new Error(`the sql connector tests need PostgreSQL on 127.0.0.1:5432 with trust auth and a database "test" (apt-get install postgresql; service postgresql start): ${(e as Error).message}`);
  }
  await pg.unsafe(`CREATE TABLE ${table} (id int8 PRIMARY KEY, small int4, temp float8, name text, at timestamptz, op text)`);
});

afterAll(async () => {
  for (const r of rules) await r.stop();
  await pg.unsafe(`DROP TABLE IF EXISTS ${table}`);
  await pg.close();
});

function collect(t: TestRuntime, topic: string): string[] {
  const out: string[] = [];
  t.env.pubsub.subscribe(topic, (_t, rows) => (out.push(encodeGoJson(rows)), true), (retry) => retry());
  return out;
}

async function started(t: TestRuntime, id: string, sql: string, actions: unknown[], defs: ReturnType<typeof streams>): Promise<RunHandle> {
  const r = await t.rule({ id, sql, actions }, defs).start();
  rules.push(r);
  return r;
}

test("dburl drivers: postgres, mysql (Go driver options dropped), sqlite paths", () => {
  expect(parseDbUrl("postgresql://u:pw@db:5432/x?sslmode=disable")).toMatchObject({ dialect: "postgres", display: "postgresql://u:******@db:5432/x?sslmode=disable" });
  const my = parseDbUrl("mysql://user:test@127.0.0.1:3306/user?parseTime=true");
  expect(my.dialect).toBe("mysql");
  expect((my.options as { url: string }).url).toBe("mysql://user:test@127.0.0.1:3306/user");
  expect(parseDbUrl("sqlite:/var/db/a.db").options).toMatchObject({ adapter: "sqlite", filename: "/var/db/a.db" });
  expect(parseDbUrl("sqlite:///var/db/a.db").options).toMatchObject({ filename: "/var/db/a.db" });
  expect(parseDbUrl("sqlite3://./rel.db?mode=ro").options).toMatchObject({ filename: "./rel.db?mode=ro" });
  expect(parseDbUrl("sqlite::memory:").options).toMatchObject({ filename: ":memory:" });
});

test("PostgreSQL: sink insert/upsert/delete, incremental source, lookup join", async () => {
  const defs = streams(
    `CREATE STREAM feed () WITH (TYPE="memory", DATASOURCE="pg/feed")`,
    `CREATE STREAM probe () WITH (TYPE="memory", DATASOURCE="pg/probe")`,
    `CREATE STREAM pgs () WITH (TYPE="sql", EXTRA="{\\"dburl\\":\\"${URL}\\",\\"interval\\":\\"20ms\\",\\"internalSqlQueryCfg\\":{\\"table\\":\\"${table}\\",\\"limit\\":2,\\"indexFields\\":[{\\"indexField\\":\\"id\\",\\"indexValue\\":0}]}}")`,
    `CREATE TABLE pgt () WITH (TYPE="sql", KIND="lookup", DATASOURCE="${table}", EXTRA="{\\"dburl\\":\\"${URL}\\"}")`,
  );
  const t = testRuntime();
  const read = collect(t, "pg/read");
  const joined = collect(t, "pg/joined");
  const sink = await started(t, "pg_sink", "SELECT * FROM feed", [{ sql: { dburl: URL, table, rowkindField: "op", keyField: "id" } }], defs);
  const pub = (row: Record<string, unknown>) => t.env.pubsub.publish("pg/feed", row as never);
  await pub({ id: 1n, small: 10n, temp: 20.5, name: "one", at: "2024-05-01T10:00:00Z" });
  await pub({ id: 2n, small: 20n, temp: 21, name: "two" });
  await pub({ id: 3n, name: "gone", op: "insert" });
  await pub({ id: 3n, op: "delete" });
  await pub({ id: 2n, small: 22n, temp: 22.5, name: "TWO", op: "upsert" });
  await pub({ id: 9007199254740993n, small: 1n, temp: 0.5, name: "big", op: "upsert" });
  await waitFor(() => metric(sink, "sink_sql_0_0_records_out_total") === 6, "6 writes");
  expect(await pg.unsafe(`SELECT id::text, small, name FROM ${table} ORDER BY id`)).toEqual([
    { id: "1", small: 10, name: "one" },
    { id: "2", small: 22, name: "TWO" },
    { id: "9007199254740993", small: 1, name: "big" },
  ]);

  await started(t, "pg_source", "SELECT id, small, temp, name, at FROM pgs", [{ memory: { topic: "pg/read" } }], defs);
  await waitFor(() => read.length === 3, "3 rows read");
  await pub({ id: 9007199254740994n, small: 4n, temp: 4, name: "later" });
  await waitFor(() => read.length === 4, "the new row");
  await Bun.sleep(60); // a fixed wait, to show that no row is read twice
  expect(read).toEqual([
    '[{"at":"2024-05-01T10:00:00Z","id":1,"name":"one","small":10,"temp":20.5}]',
    '[{"at":null,"id":2,"name":"TWO","small":22,"temp":22.5}]',
    '[{"at":null,"id":9007199254740993,"name":"big","small":1,"temp":0.5}]',
    '[{"at":null,"id":9007199254740994,"name":"later","small":4,"temp":4}]',
  ]);

  const lk = await started(t, "pg_lookup", `SELECT probe.k, pgt.name, pgt.small + 1 AS s1 FROM probe INNER JOIN pgt ON pgt.id = probe.k`, [{ memory: { topic: "pg/joined" } }], defs);
  await t.env.pubsub.publish("pg/probe", { k: 2n });
  await t.env.pubsub.publish("pg/probe", { k: 5n });
  await t.env.pubsub.publish("pg/probe", { k: 9007199254740993n });
  await waitFor(() => joined.length === 2, "2 joined rows");
  expect(joined).toEqual(['[{"k":2,"name":"TWO","s1":23}]', '[{"k":9007199254740993,"name":"big","s1":2}]']);
  expect(metric(lk, "op_pgt_0_records_in_total")).toBe(3);
});

test("PostgreSQL on a closed port: sends fail as IO errors and are retried with resendInterval", async () => {
  const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = closed.port;
  closed.stop(true);
  const defs = streams(`CREATE STREAM feed2 () WITH (TYPE="memory", DATASOURCE="pg/feed2")`);
  const t = testRuntime();
  const r = await started(t, "pg_closed", "SELECT * FROM feed2", [{ sql: { dburl: `postgres://postgres@127.0.0.1:${port}/test`, table, resendInterval: 20 } }], defs);
  await t.env.pubsub.publish("pg/feed2", { id: 100n });
  await waitFor(() => (metric(r, "sink_sql_0_0_exceptions_total") as number) >= 2, "retried attempts");
  expect(String(metric(r, "sink_sql_0_0_last_exception"))).toStartWith("sql sink: ");
  expect(metric(r, "sink_sql_0_0_connection_status")).toBe(-1);
  expect(metric(r, "sink_sql_0_0_records_out_total")).toBe(0);
});
