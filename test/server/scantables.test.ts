/**
 * `GET /rules/{name}/scantables` (rest-api.md §5): the rows each scan table of a running
 * stream ⋈ table rule holds. The table reads a memory topic a simulator-fed rule publishes on.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitForValue } from "../helpers/wait.ts";
import { startFloe, type DaemonProc } from "./daemon.ts";

let d: DaemonProc;

beforeAll(async () => {
  d = await startFloe();
  for (const sql of [
    `CREATE STREAM feedin () WITH (TYPE="simulator", EXTRA="{\\"data\\":[{\\"id\\":1,\\"name\\":\\"a\\"},{\\"id\\":2,\\"name\\":\\"b\\"},{\\"id\\":3,\\"name\\":\\"c\\"}],\\"interval\\":10,\\"loop\\":false}")`,
    'CREATE STREAM ev () WITH (TYPE="memory", DATASOURCE="sc/ev")',
    'CREATE TABLE st () WITH (TYPE="memory", DATASOURCE="sc/table", RETAIN_SIZE="2")',
  ])
    expect((await d.call("POST", "/streams", { sql })).status).toBe(201);
});

afterAll(async () => {
  await d?.stop();
});

test("scantables: unknown rule, rule without a join", async () => {
  expect(await d.call("GET", "/rules/nope/scantables")).toMatchObject({ status: 404, text: '{"error":1002,"message":"Rule nope is not found"}\n' });
  expect((await d.call("POST", "/rules", { id: "plain", sql: "SELECT * FROM ev", actions: [{ nop: {} }] })).status).toBe(201);
  expect(await d.call("GET", "/rules/plain/scantables")).toMatchObject({ status: 400, text: '{"error":1000,"message":"scan table error: join node is not found for plain"}\n' });
});

test("scantables lists each row a scan table retains (RETAIN_SIZE) as one emitter/content entry", async () => {
  const join = { id: "sj", sql: "SELECT ev.id, st.name FROM ev INNER JOIN st ON ev.id = st.id", actions: [{ nop: {} }] };
  expect((await d.call("POST", "/rules", join)).status).toBe(201);
  expect(await d.call("GET", "/rules/sj/scantables")).toMatchObject({ status: 400, text: '{"error":1000,"message":"scan table error: unable to find tuples for the given scan table"}\n' });

  expect((await d.call("POST", "/rules", { id: "feed", sql: "SELECT * FROM feedin", actions: [{ memory: { topic: "sc/table" } }] })).status).toBe(201);
  const r = await waitForValue(async () => {
    const res = await d.call("GET", "/rules/sj/scantables");
    return res.text.includes('"c"') ? res : undefined;
  }, "the scan table to hold the fed rows", 5000, 50);
  expect(r.status).toBe(200);
  expect(r.headers.get("Content-Type")).toBe("application/json");
  expect(r.text).toBe('[{"emitter":"st","content":{"id":2,"name":"b"}},{"emitter":"st","content":{"id":3,"name":"c"}}]');

  // A stopped rule has no join node to inspect.
  expect((await d.call("POST", "/rules/sj/stop")).status).toBe(200);
  expect((await d.call("GET", "/rules/sj/scantables")).text).toBe('{"error":1000,"message":"scan table error: join node is not found for sj"}\n');
});
