/**
 * Stream ⋈ lookup-table joins at run time (sql.md §12.5): memory tables fed by other rules' memory
 * sinks, LEFT vs INNER, extra ON conjuncts as a filter, chained lookups, key errors counted on
 * the node, and the redis lookup against the real Redis on 127.0.0.1:6379 (in input order).
 */
import { afterAll, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { Tuple } from "../../lib/expr/row.ts";
import type { Obj } from "../../lib/value/values.ts";
import { encodeGoJson } from "../../lib/value/json-encode.ts";
import { Collection } from "../../lib/core/item.ts";
import { LOOKUP_CAPACITY, LookupOp } from "../../lib/ops/lookup.ts";
import type { RunHandle } from "../../lib/runtime/rule.ts";
import { metric, streams, testRuntime, waitFor, type TestRuntime } from "../helpers/runtime.ts";

/** Every row published on `topic`, as Go JSON text, one entry per emission. */
function collect(t: TestRuntime, topic: string): string[] {
  const out: string[] = [];
  t.env.pubsub.subscribe(
    topic,
    (_topic, rows) => {
      out.push(encodeGoJson(rows));
      return true;
    },
    (retry) => retry(),
  );
  return out;
}

const defs = streams(
  `CREATE STREAM demo () WITH (TYPE="memory", DATASOURCE="lk/demo")`,
  `CREATE STREAM feed () WITH (TYPE="memory", DATASOURCE="lk/feed")`,
  `CREATE TABLE t () WITH (TYPE="memory", KIND="lookup", DATASOURCE="lk/table", KEY="id")`,
  `CREATE TABLE u () WITH (TYPE="memory", KIND="lookup", DATASOURCE="lk/utable", KEY="uid")`,
);

const rules: RunHandle[] = [];
afterAll(async () => {
  for (const r of rules) await r.stop();
});

async function started(t: TestRuntime, sql: string, actions: unknown[], id = `r${rules.length}`): Promise<RunHandle> {
  const r = await t.rule({ id, sql, actions }, defs).start();
  rules.push(r);
  return r;
}

test("a memory lookup table is fed by another rule's memory sink; rowkind delete removes a key", async () => {
  const t = testRuntime();
  const out = collect(t, "lk/out");
  // Rule A keeps the table up to date from the feed stream (rule chaining, rules-and-sinks.md §10.4).
  const a = await started(t, "SELECT * FROM feed", [{ memory: { topic: "lk/table", rowkindField: "action", keyField: "id" } }]);
  const b = await started(t, "SELECT demo.id, t.name FROM demo INNER JOIN t ON demo.id = t.id", [{ memory: { topic: "lk/out" } }]);
  await t.env.pubsub.publish("lk/demo", { id: 1 }); // table still empty: nothing
  await t.env.pubsub.publish("lk/feed", [{ id: 1, name: "one", action: "insert" }, { id: 2, name: "two", action: "upsert" }]);
  await waitFor(() => metric(a, "sink_memory_0_0_records_out_total") === 2, "the feed rule");
  await t.env.pubsub.publish("lk/demo", { id: 1 });
  await t.env.pubsub.publish("lk/demo", { id: 2 });
  await waitFor(() => out.length === 2, "two joined rows");
  expect(out).toEqual(['[{"id":1,"name":"one"}]', '[{"id":2,"name":"two"}]']);
  await t.env.pubsub.publish("lk/feed", { id: 1, action: "delete" });
  await t.env.pubsub.publish("lk/feed", { id: 2, name: "TWO", action: "update" });
  await waitFor(() => metric(a, "sink_memory_0_0_records_out_total") === 4, "the feed rule");
  await t.env.pubsub.publish("lk/demo", { id: 1 });
  await t.env.pubsub.publish("lk/demo", { id: 2 });
  await waitFor(() => out.length === 3, "the updated row");
  expect(out[2]).toBe('[{"id":2,"name":"TWO"}]');
  expect(metric(b, "op_t_0_records_in_total")).toBe(5);
  expect(metric(b, "op_t_0_records_out_total")).toBe(3);
});

test("LEFT keeps an unmatched row alone, INNER drops it; a null key never matches; `*` merges left first", async () => {
  const t = testRuntime();
  const left = collect(t, "lk/left");
  const inner = collect(t, "lk/inner");
  await started(t, "SELECT * FROM demo LEFT JOIN t ON t.id = demo.id", [{ memory: { topic: "lk/left" } }]);
  await started(t, "SELECT demo.*, t.name FROM demo INNER JOIN t ON t.id = demo.id", [{ memory: { topic: "lk/inner" } }]);
  await t.env.pubsub.publish("lk/table", [{ id: 1, name: "one", v: "table" }]);
  for (const row of [{ id: 1, v: "stream" }, { id: 9, v: "x" }, { v: "no id" }] as Obj[]) await t.env.pubsub.publish("lk/demo", row);
  await waitFor(() => left.length === 3 && inner.length === 1, "results");
  expect(left).toEqual(['[{"id":1,"name":"one","v":"stream"}]', '[{"id":9,"v":"x"}]', '[{"v":"no id"}]']);
  expect(inner).toEqual(['[{"id":1,"name":"one","v":"stream"}]']);
});

test("ON conjuncts other than keys filter after the lookup; WHERE on the table too", async () => {
  const t = testRuntime();
  const out = collect(t, "lk/f");
  const r = await started(t, "SELECT demo.id, t.name FROM demo INNER JOIN t ON demo.id = t.id AND t.level > demo.min WHERE t.name != \"skip\"", [{ memory: { topic: "lk/f" } }]);
  await t.env.pubsub.publish("lk/table", [{ id: 1, name: "one", level: 5 }, { id: 2, name: "skip", level: 9 }]);
  for (const row of [{ id: 1, min: 9 }, { id: 1, min: 1 }, { id: 2, min: 1 }]) await t.env.pubsub.publish("lk/demo", row);
  await waitFor(() => metric(r, "op_3_filter_0_records_in_total") === 3, "the filter");
  expect(out).toEqual(['[{"id":1,"name":"one"}]']);
});

test("two lookup joins chain: the second reads the first one's row", async () => {
  const t = testRuntime();
  const out = collect(t, "lk/chain");
  await started(t, "SELECT demo.id, t.name, u.city FROM demo INNER JOIN t ON demo.id = t.id LEFT JOIN u ON u.uid = t.uid", [{ memory: { topic: "lk/chain" } }]);
  await t.env.pubsub.publish("lk/table", [{ id: 1, name: "one", uid: "a" }, { id: 2, name: "two", uid: "zz" }]);
  await t.env.pubsub.publish("lk/utable", { uid: "a", city: "Oslo" });
  await t.env.pubsub.publish("lk/demo", { id: 1 });
  await t.env.pubsub.publish("lk/demo", { id: 2 });
  await waitFor(() => out.length === 2, "two results");
  expect(out).toEqual(['[{"city":"Oslo","id":1,"name":"one"}]', '[{"id":2,"name":"two"}]']);
});

test("a lookup over a window joins every row of it", async () => {
  const t = testRuntime();
  const out = collect(t, "lk/win");
  await started(t, "SELECT demo.id, t.name FROM demo LEFT JOIN t ON demo.id = t.id GROUP BY COUNTWINDOW(2)", [{ memory: { topic: "lk/win" } }]);
  await t.env.pubsub.publish("lk/table", { id: 2, name: "two" });
  await t.env.pubsub.publish("lk/demo", { id: 1 });
  await t.env.pubsub.publish("lk/demo", { id: 2 });
  await waitFor(() => out.length === 1, "the window");
  expect(out[0]).toBe('[{"id":1},{"id":2,"name":"two"}]');
});

test("a simulator table needs no KEY; an unknown lookup TYPE fails the rule start", async () => {
  const t = testRuntime();
  const bad = streams(`CREATE STREAM demo () WITH (TYPE="memory", DATASOURCE="lk/demo")`, `CREATE TABLE t () WITH (TYPE="simulator", KIND="lookup", DATASOURCE="x")`);
  const ok = await t.rule({ id: "nokey", sql: "SELECT * FROM demo INNER JOIN t ON demo.id = t.id", actions: [{ nop: {} }] }, bad).start();
  expect(ok.exit).toBeUndefined();
  await ok.stop();
  const other = streams(`CREATE STREAM demo () WITH (TYPE="memory", DATASOURCE="lk/demo")`, `CREATE TABLE t () WITH (TYPE="nosuch", KIND="lookup")`);
  const r = t.rule({ id: "badtype", sql: "SELECT * FROM demo INNER JOIN t ON demo.id = t.id", actions: [{ nop: {} }] }, other);
  await expect(r.start()).rejects.toThrow("lookup source type nosuch is not supported");
});

// ---------------------------------------------------------------------------------------------
// Redis

const PREFIX = `floe_lookup_test_${process.pid}_${Date.now()}_`;

async function redis(): Promise<RedisClient> {
  const c = new RedisClient("redis://127.0.0.1:6379/3");
  try {
    await c.connect();
  } catch (e) {
    throw new Error(`these tests need Redis on 127.0.0.1:6379 (install redis-server; .ci/run starts it): ${(e as Error).message}`);
  }
  return c;
}

test("redis lookup: GET string values and LRANGE lists, missing keys, input order kept, one key only", async () => {
  const c = await redis();
  try {
    await c.set(PREFIX + "1", JSON.stringify({ name: "one", n: 1 }));
    await c.send("RPUSH", [PREFIX + "L", JSON.stringify({ name: "l1" }), JSON.stringify({ name: "l2" })]);
    const t = testRuntime();
    const rdefs = streams(
      `CREATE STREAM demo () WITH (TYPE="memory", DATASOURCE="lk/rdemo")`,
      `CREATE TABLE rs () WITH (TYPE="redis", KIND="lookup", DATASOURCE="3")`,
      `CREATE TABLE rl () WITH (TYPE="redis", KIND="lookup", DATASOURCE="3", EXTRA="{\\"dataType\\":\\"list\\"}")`,
    );
    const out = collect(t, "lk/rout");
    const lout = collect(t, "lk/rlout");
    const mk = async (id: string, sql: string, topic: string) => {
      const r = await t.rule({ id, sql, actions: [{ memory: { topic } }] }, rdefs).start();
      rules.push(r);
      return r;
    };
    const rs = await mk("rs", "SELECT demo.seq, rs.name, rs.n FROM demo LEFT JOIN rs ON rs.k = demo.key", "lk/rout");
    const rl = await mk("rl", "SELECT demo.seq, rl.name FROM demo INNER JOIN rl ON rl.k = demo.key", "lk/rlout");
    const keys = [PREFIX + "1", PREFIX + "missing", PREFIX + "1", PREFIX + "L"];
    for (let i = 0; i < 40; i++) await t.env.pubsub.publish("lk/rdemo", { seq: i, key: keys[i % 4]! });
    // GET of a list key (and LRANGE of a string key) is a WRONGTYPE error: counted on the lookup
    // node, the row is lost, the rule goes on.
    await waitFor(() => out.length === 30 && metric(rs, "op_rs_0_exceptions_total") === 10, "redis string results");
    await waitFor(() => lout.length === 10 && metric(rl, "op_rl_0_exceptions_total") === 20, "redis list results");
    const seqs = out.map((s) => (JSON.parse(s) as Obj[])[0]!.seq);
    expect(seqs).toEqual([...Array(40).keys()].filter((i) => i % 4 !== 3));
    expect(out.slice(0, 2)).toEqual(['[{"n":1,"name":"one","seq":0}]', '[{"seq":1}]']);
    expect(String(metric(rs, "op_rs_0_last_exception"))).toContain("WRONGTYPE");
    expect(lout[0]).toBe('[{"name":"l1","seq":3},{"name":"l2","seq":3}]');
    expect(rs.exit).toBeUndefined();

    const two = await t.rule({ id: "two", sql: "SELECT * FROM demo INNER JOIN rs ON rs.a = demo.a AND rs.b = demo.b", actions: [{ nop: {} }] }, rdefs).start();

    rules.push(two);
    await t.env.pubsub.publish("lk/rdemo", { a: 1, b: 2 });
    await waitFor(() => metric(two, "op_rs_0_exceptions_total") === 1, "the key error");
    expect(metric(two, "op_rs_0_last_exception")).toBe("redis lookup only support one key, but got [a b]");
    expect(two.exit).toBeUndefined();
  } finally {
    await c.send("DEL", [PREFIX + "1", PREFIX + "L"]);
    c.close();
  }
}, 20_000);

test("lookup.cache serves a key from the cache until cacheTtl passes", async () => {
  const t = testRuntime();
  const cdefs = streams(
    `CREATE STREAM demo () WITH (TYPE="memory", DATASOURCE="lk/cdemo")`,
    `CREATE TABLE tc () WITH (TYPE="memory", KIND="lookup", DATASOURCE="lk/ctable", KEY="id", EXTRA="{\\"lookup\\":{\\"cache\\":true,\\"cacheTtl\\":\\"1h\\"}}")`,
  );
  const out = collect(t, "lk/cout");
  const r = await t.rule({ id: "cache", sql: "SELECT tc.name FROM demo INNER JOIN tc ON tc.id = demo.id", actions: [{ memory: { topic: "lk/cout" } }] }, cdefs).start();
  rules.push(r);
  await t.env.pubsub.publish("lk/ctable", { id: 1, name: "first" });
  await t.env.pubsub.publish("lk/cdemo", { id: 1 });
  await t.env.pubsub.publish("lk/ctable", { id: 1, name: "second" });
  await t.env.pubsub.publish("lk/cdemo", { id: 1 });
  await waitFor(() => out.length === 2, "two results");
  expect(out).toEqual(['[{"name":"first"}]', '[{"name":"first"}]']);
});

test("an asynchronous lookup emits in input order whatever order answers arrive in; its FIFO is a room gate", async () => {
  const answers: ((rows: Obj[]) => void)[] = [];
  const source = { open() {}, close() {}, lookup: () => new Promise<Obj[]>((r) => answers.push(r)) };
  const table = streams(`CREATE TABLE t () WITH (TYPE="memory", KIND="lookup", DATASOURCE="x", KEY="id")`).get("t")!;
  const op = new LookupOp("t", { now: () => 0, sendError: false }, { table, type: "LEFT", fields: ["id"], values: [(row) => row.value("id", "s")] });
  const seen: string[] = [];
  op.next = { push: (item) => void (item instanceof Collection && seen.push(encodeGoJson(item.rows.map((r) => r.columns(undefined))))) };
  op.attach(source);
  for (let i = 1; i <= 3; i++) op.push(new Tuple({ id: BigInt(i) }, null, 0, "s"));
  expect(op.room()).toBe(LOOKUP_CAPACITY - 3);
  answers[2]!([{ name: "c" }]);
  answers[1]!([]);
  // A fixed turn of the loop, to show that the later answers alone emit nothing.
  await Bun.sleep(0);
  expect(seen).toEqual([]); // the first item still waits
  const settled = op.settle();
  answers[0]!([{ name: "a" }]);
  await settled;
  expect(seen).toEqual(['[{"id":1,"name":"a"}]', '[{"id":2}]', '[{"id":3,"name":"c"}]']);
  expect(op.room()).toBe(LOOKUP_CAPACITY);
  await op.detach();
});
