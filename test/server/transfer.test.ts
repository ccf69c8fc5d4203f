/** Export/import round trips between two daemons (rest-api.md §9–§10): v1 JSON, async, v2 YAML. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitForValue } from "../helpers/wait.ts";
import { startFloe, type DaemonProc } from "./daemon.ts";

let a: DaemonProc;
let b: DaemonProc;

beforeAll(async () => {
  [a, b] = await Promise.all([startFloe(), startFloe()]);
  await a.call("POST", "/streams", { sql: 'CREATE STREAM s1 (v bigint) WITH (DATASOURCE="s1", TYPE="memory")' });
  await a.call("POST", "/tables", { sql: 'CREATE TABLE t1 () WITH (DATASOURCE="t1", TYPE="memory", KIND="lookup", KEY="id")' });
  await a.call("POST", "/rules", { id: "x1", sql: "SELECT v FROM s1", actions: [{ nop: {} }], tags: ["a"] });
  await a.call("PUT", "/metadata/sources/mqtt/confKeys/c1", { server: "tcp://127.0.0.1:1883" });
  await a.call("POST", "/udf/javascript", { id: "twice", script: "function twice(x) { return 2 * x; }" });
  await b.call("POST", "/streams", { sql: 'CREATE STREAM gone () WITH (DATASOURCE="gone", TYPE="memory")' });
  // Two daemons start here: on a loaded machine that takes longer than bun's 5 s default.
}, 30_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

test("a full v1 export imported elsewhere replaces everything there", async () => {
  const exp = await a.call("GET", "/data/export");
  expect(exp.headers.get("Content-Disposition")).toBe("Attachment");
  const doc = JSON.parse(exp.text) as Record<string, Record<string, string>>;
  expect(Object.keys(doc)).toEqual(["streams", "tables", "rules", "nativePlugins", "portablePlugins", "sourceConfig", "sinkConfig", "connectionConfig", "Service", "Schema", "uploads", "scripts"]);
  expect(JSON.parse(doc.sourceConfig!.mqtt!)).toEqual({ c1: { server: "tcp://127.0.0.1:1883" } });
  const imp = await b.call("POST", "/data/import", { content: exp.text });
  expect(imp.status).toBe(200);
  expect(JSON.parse(imp.text).ErrorMsg).toBe("");
  expect(JSON.parse((await b.call("GET", "/streams")).text)).toEqual(["s1"]);
  expect(JSON.parse((await b.call("GET", "/tables")).text)).toEqual(["t1"]);
  expect(JSON.parse((await b.call("GET", "/udf/javascript")).text)).toEqual(["twice"]);
  const rules = JSON.parse((await b.call("GET", "/rules")).text) as { id: string; status: string; tags: string[] }[];
  expect(rules.map((r) => [r.id, r.status, r.tags])).toEqual([["x1", "running", ["a"]]]);
});

test("a failing item makes the import answer 400 with the per-item errors", async () => {
  const bad = { rules: { bad: '{"id":"bad","sql":"SELECT * FROM nowhere","actions":[{"nop":{}}]}' } };
  const r = await b.call("POST", "/data/import?partial=1", { content: JSON.stringify(bad) });
  expect(r.status).toBe(400);
  const msg = JSON.parse(JSON.parse(r.text).message) as { rules: Record<string, string> };
  expect(msg.rules.bad).toContain("nowhere");
});

test("an unreadable document is refused before the reset: nothing is lost (eKuiper resets first)", async () => {
  const before = (await a.call("GET", "/streams")).text;
  const r = await a.call("POST", "/data/import", { content: "{not json" });
  expect(r.status).toBe(400);
  expect(JSON.parse(r.text).message).toStartWith("configuration unmarshal with error ");
  expect((await a.call("GET", "/streams")).text).toBe(before);
  expect(JSON.parse((await a.call("GET", "/rules")).text).map((x: { id: string }) => x.id)).toEqual(["x1"]);
});

test("async import: a task id, then its status", async () => {
  const r = await b.call("POST", "/async/data/import?partial=1", { content: JSON.stringify({ streams: { s9: 'CREATE STREAM s9 () WITH (DATASOURCE="s9", TYPE="memory")' } }) });
  const { id } = JSON.parse(r.text) as { id: string };
  expect(id).toMatch(/^dataImport-\d+$/);
  const task = await waitForValue(async () => {
    const t = JSON.parse((await b.call("GET", `/async/task/${id}`)).text) as { status: string; message: string };
    return t.status === "finish" ? t : undefined;
  }, "the import task to finish", 3000, 20);
  expect(task.status).toBe("finish");
  expect(JSON.parse(task.message).ErrorMsg).toBe("");
});

test("v2 YAML export and import", async () => {
  const y = await a.call("GET", "/v2/data/export");
  expect(y.text).toContain("streams:");
  expect(y.text).toContain("    s1:");
  const r = await b.call("POST", "/v2/data/import", { content: y.text.replace(/x1/g, "x2") });
  expect([r.status, r.text]).toEqual([200, "success"]);
  const rules = JSON.parse((await b.call("GET", "/rules")).text) as { id: string }[];
  expect(rules.map((x) => x.id)).toContain("x2");
});

test("a partial export holds only what the rules need: their streams, the confKeys they name, the scripts they call", async () => {
  await a.call("PUT", "/metadata/sources/mqtt/confKeys/default", { server: "tcp://127.0.0.1:1884" });
  await a.call("POST", "/udf/javascript", { id: "unused", script: "function unused(x) { return x; }" });
  await a.call("POST", "/streams", { sql: 'CREATE STREAM s2 (v bigint) WITH (DATASOURCE="s2", TYPE="mqtt", CONF_KEY="c1")' });
  await a.call("POST", "/rules", { id: "x2", sql: "SELECT Twice(v) AS w FROM s2 WHERE v > 1", actions: [{ nop: {} }], triggered: false });
  const doc = (ids: string[]) => a.call("POST", "/data/export", ids).then((r) => JSON.parse(r.text) as Record<string, Record<string, string>>);
  const one = await doc(["x1"]);
  expect(Object.keys(one.rules!)).toEqual(["x1"]);
  expect(one.streams).toEqual({ s1: 'CREATE STREAM s1 (v bigint) WITH (DATASOURCE="s1", TYPE="memory")' });
  expect(one.sourceConfig).toEqual({});
  expect(one.scripts).toEqual({});
  const two = await doc(["x2"]);
  expect(Object.keys(two.streams!)).toEqual(["s2"]);
  expect(JSON.parse(two.sourceConfig!.mqtt!)).toEqual({ c1: { server: "tcp://127.0.0.1:1883" } });
  expect(Object.keys(two.scripts!)).toEqual(["twice"]);
  // eKuiper looks the confKey up under the stream's literal TYPE: without one (mqtt by default) there is none.
  await a.call("POST", "/streams", { sql: 'CREATE STREAM s3 (v bigint) WITH (DATASOURCE="s3", CONF_KEY="c1")' });
  await a.call("POST", "/rules", { id: "x3", sql: "SELECT v FROM s3", actions: [{ nop: {} }], triggered: false });
  const three = await doc(["x3"]);
  expect([Object.keys(three.streams!), three.sourceConfig]).toEqual([["s3"], {}]);
  await a.call("DELETE", "/rules/x3");
  await a.call("DELETE", "/streams/s3");
  for (const id of ["x2"]) await a.call("DELETE", `/rules/${id}`);
  await a.call("DELETE", "/streams/s2");
  await a.call("DELETE", "/udf/javascript/unused");
  await a.call("DELETE", "/metadata/sources/mqtt/confKeys/default");
});
