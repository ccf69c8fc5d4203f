/**
 * Memory lookup tables in the daemon (rules-and-sinks.md §10.3, rest-api.md §4): the table lives
 * from CREATE TABLE (or its restore at start) to DROP TABLE, fed by memory sinks while no rule
 * uses it. The feeding rule reads a simulator stream; the joins run as trial runs.
 */
import { afterAll, expect, test } from "bun:test";
import { waitFor } from "../helpers/wait.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

let d: DaemonProc | undefined;

afterAll(async () => {
  if (d && d.proc.exitCode === null) await d.stop();
});

const FEED_STREAM = `CREATE STREAM feedin () WITH (TYPE="simulator", EXTRA="{\\"data\\":[{\\"id\\":7,\\"name\\":\\"pump\\"}],\\"interval\\":10,\\"loop\\":false}")`;
const TABLE = 'CREATE TABLE devices () WITH (TYPE="memory", KIND="lookup", DATASOURCE="mt/devices", KEY="id")';

/** Runs the feeding rule to its end (`done`): its one row is published on the table's topic. */
async function feed(daemon: DaemonProc): Promise<void> {
  const r = await daemon.call("POST", "/rules", { id: "feed", sql: "SELECT * FROM feedin", actions: [{ memory: { topic: "mt/devices" } }] });
  expect(r.status).toBe(201);
  await waitFor(async () => JSON.parse((await daemon.call("GET", "/rules/feed/status")).text).status === "stopped", "the feeding rule to stop", 5000, 50);
  expect(JSON.parse((await daemon.call("GET", "/rules/feed/status")).text).message).toBe("done");
  expect((await daemon.call("DELETE", "/rules/feed")).status).toBe(200);
}

/** The first event of a trial joining one event row (id 7) with the table. */
async function joined(daemon: DaemonProc, id: string): Promise<string> {
  const body = {
    id,
    sql: "SELECT ev.id, devices.name FROM ev LEFT JOIN devices ON ev.id = devices.id",
    mockSource: { ev: { data: [{ id: 7 }], interval: 10, loop: false } },
    sinkProps: { sendSingle: true },
  };
  const r = await daemon.call("POST", "/ruletest", body);
  expect(r.status).toBe(200);
  const { port } = JSON.parse(r.text) as { port: number };
  const res = await fetch(`http://127.0.0.1:${port}/test/${id}`);
  const reader = res.body!.getReader();
  await daemon.call("POST", `/ruletest/${id}/start`);
  let text = "";
  const end = Date.now() + 5000;
  while (!text.includes("data: ") || !text.slice(text.indexOf("data: ")).includes("\n\n")) {
    if (Date.now() > end) throw new Error(`no event: ${text}`);
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  await reader.cancel();
  await daemon.call("DELETE", `/ruletest/${id}`);
  const ev = text.slice(text.indexOf("data: ") + 6);
  return ev.slice(0, ev.indexOf("\n\n"));
}

test("a memory lookup table keeps rows published while no rule uses it, until DROP TABLE", async () => {
  const dir = tempHome();
  d = await startFloe(dir);
  for (const sql of [FEED_STREAM, 'CREATE STREAM ev () WITH (DATASOURCE="mt/ev")']) expect((await d.call("POST", "/streams", { sql })).status).toBe(201);
  expect((await d.call("POST", "/tables", { sql: TABLE })).text).toBe("Table devices is created.");

  await feed(d);
  expect(await joined(d, "j1")).toBe('{"id":7,"name":"pump"}');

  // DROP closes the table: a new table on the same topic starts empty.
  expect((await d.call("DELETE", "/tables/devices")).text).toBe("Table devices is dropped.");
  expect((await d.call("POST", "/tables", { sql: TABLE })).status).toBe(201);
  expect(await joined(d, "j2")).toBe('{"id":7}');

  // Restored at start: open (empty) before any rule uses it, fed again by the next publisher.
  expect(await d.stop()).toBe(0);
  d = await startFloe(dir);
  expect(await joined(d, "j3")).toBe('{"id":7}');
  await feed(d);
  expect(await joined(d, "j4")).toBe('{"id":7,"name":"pump"}');
}, 30_000);
