/** Trial runs with mocked sources (rest-api.md §8): results as server-sent events, no broker needed. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFloe, type DaemonProc } from "./daemon.ts";

let d: DaemonProc;

beforeAll(async () => {
  d = await startFloe();
  await d.call("POST", "/streams", { sql: 'CREATE STREAM demo (a bigint) WITH (DATASOURCE="demo", TYPE="mqtt")' });
});

afterAll(async () => {
  await d?.stop();
});

async function events(port: number, id: string, n: number): Promise<string[]> {
  const res = await fetch(`http://127.0.0.1:${port}/test/${id}`);
  expect(res.headers.get("Content-Type")).toBe("text/event-stream");
  expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
  const reader = res.body!.getReader();
  expect((await d.call("POST", `/ruletest/${id}/start`)).text).toBe(`Test rule ${id} was started`);
  let text = "";
  const end = Date.now() + 5000;
  while (Date.now() < end) {
    const got = text.split("\n\n").filter((e) => e.startsWith("data: "));
    if (got.length >= n) {
      await reader.cancel();
      return got.map((e) => e.slice(6));
    }
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  throw new Error(`got ${text}`);
}

test("mockSource rows replace the connector and every result is one event", async () => {
  const body = { id: "t1", sql: "SELECT a * 2 AS b FROM demo", mockSource: { demo: { data: [{ a: 1 }, { a: 2 }], interval: 10, loop: false } } };
  const r = await d.call("POST", "/ruletest", body);
  expect(r.status).toBe(200);
  expect(r.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
  const { port } = JSON.parse(r.text) as { port: number };
  expect(await events(port, "t1", 2)).toEqual(['[{"b":2}]', '[{"b":4}]']);
  expect((await d.call("DELETE", "/ruletest/t1")).text).toBe("Test rule t1 was stopped.");
});

test("trial errors: bad JSON, planning failure, unknown id", async () => {
  const bad = await d.call("POST", "/ruletest", "{");
  expect(bad.status).toBe(400);
  expect(JSON.parse(bad.text).message).toStartWith("fail to parse rule definition { : ");
  const plan = await d.call("POST", "/ruletest", { id: "t2", sql: "SELECT * FROM nope" });
  expect(plan.text).toBe('{"error":1000,"message":"fail to run rule t2: fail to get stream nope, please check if stream is created"}\n');
  const start = await d.call("POST", "/ruletest/t9/start");
  expect([start.status, start.text]).toEqual([400, '{"error":1000,"message":"start rule error: try to start test rule t9 but it is not found"}\n']);
  expect((await d.call("DELETE", "/ruletest/t9")).text).toBe("Test rule t9 was stopped.");
});

test("sendSingle: one event per row of a result", async () => {
  const body = {
    id: "t3",
    sql: "SELECT a FROM demo GROUP BY COUNTWINDOW(2)",
    mockSource: { demo: { data: [{ a: 1 }, { a: 2 }], interval: 10, loop: false } },
    sinkProps: { sendSingle: true },
  };
  const r = await d.call("POST", "/ruletest", body);
  const { port } = JSON.parse(r.text) as { port: number };
  expect(await events(port, "t3", 2)).toEqual(['{"a":1}', '{"a":2}']);
  await d.call("DELETE", "/ruletest/t3");
});

test("sinkProps dataTemplate and fields shape each event", async () => {
  const mockSource = { demo: { data: [{ a: 1 }, { a: 2 }], interval: 10, loop: false } };
  const tpl = await d.call("POST", "/ruletest", { id: "t4", sql: "SELECT a * 2 AS b FROM demo", mockSource, sinkProps: { sendSingle: true, dataTemplate: "b={{.b}}" } });
  expect(await events((JSON.parse(tpl.text) as { port: number }).port, "t4", 2)).toEqual(["b=2", "b=4"]);
  await d.call("DELETE", "/ruletest/t4");
  const f = await d.call("POST", "/ruletest", { id: "t5", sql: "SELECT a, a * 2 AS b FROM demo", mockSource, sinkProps: { fields: ["b"] } });
  expect(await events((JSON.parse(f.text) as { port: number }).port, "t5", 2)).toEqual(['[{"b":2}]', '[{"b":4}]']);
  await d.call("DELETE", "/ruletest/t5");
});

test("invalid sinkProps fail the trial with the sink's message", async () => {
  const r = await d.call("POST", "/ruletest", { id: "t6", sql: "SELECT a FROM demo", sinkProps: { fields: ["a"], excludeFields: ["b"] } });
  expect(r.text).toBe('{"error":1000,"message":"fail to run rule t6: fail to parse sink configuration: field and excludeFields cannot both be set"}\n');
});
