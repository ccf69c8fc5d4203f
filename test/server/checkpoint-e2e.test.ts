/**
 * Rule checkpoints across a daemon crash (rules-and-sinks.md §5): a qos 1 rule over a watched
 * file directory checkpoints its open window and the files it read; after `kill -9` and a
 * restart the window completes with the rows from before the crash, and no file is read twice.
 */
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodeState } from "../../lib/store/state-codec.ts";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

const home = tempHome({ "sources/file.yaml": "default:\n  fileType: lines\n  path: in\n" });
let d: DaemonProc | undefined;
afterAll(async () => {
  await d?.stop("SIGKILL");
  rmSync(home, { recursive: true, force: true });
});

/** The count of rows the newest checkpoint of `rule` holds in its count window, and the files it read. */
function checkpointed(rule: string): { count: number; files: string } {
  const path = join(home, "data", "checkpoint.db");
  if (!existsSync(path)) return { count: -1, files: "" };
  const db = new Database(path, { readonly: true });
  try {
    // The daemon may hold the write lock (switching the new file to WAL, or writing a checkpoint).
    db.run("PRAGMA busy_timeout = 5000");
    // The file exists a moment before the daemon has created its table.
    const hasTable = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoint'").get();
    if (!hasTable) return { count: -1, files: "" };
    const row = db.query("SELECT state FROM checkpoint WHERE rule = ? ORDER BY id DESC LIMIT 1").get(rule) as { state: string } | null;
    if (!row) return { count: -1, files: "" };
    const s = decodeState(row.state) as { ops: Record<string, { count?: number }>; sources: Record<string, unknown> };
    const win = Object.entries(s.ops).find(([k]) => k.endsWith("_window"));
    return { count: win?.[1].count ?? -1, files: JSON.stringify(s.sources) };
  } finally {
    db.close();
  }
}

test("after kill -9 the restarted rule restores its window and source offset from the last checkpoint", async () => {
  const inDir = join(home, "in");
  mkdirSync(inDir, { recursive: true });
  const out = join(home, "out.txt");
  d = await startFloe(home);
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM s () WITH (TYPE="file", DATASOURCE="", FORMAT="json")' })).status).toBe(201);
  const rule = {
    id: "ck",
    sql: "SELECT collect(n) AS ns FROM s GROUP BY COUNTWINDOW(4)",
    actions: [{ file: { path: out, fileType: "lines" } }],
    options: { qos: 1, checkpointInterval: 50 },
  };
  expect((await d.call("POST", "/rules", rule)).status).toBe(201);
  writeFileSync(join(inDir, "a.json"), '{"n":1}\n{"n":2}\n');
  await waitFor(() => checkpointed("ck").count === 2 && checkpointed("ck").files.includes("a.json"), "a checkpoint holding the first two rows");
  expect(await d.stop("SIGKILL")).not.toBe(0);

  d = await startFloe(home);
  writeFileSync(join(inDir, "b.json"), '{"n":3}\n{"n":4}\n');
  await waitFor(() => existsSync(out) && readFileSync(out, "utf8").includes("ns"), "the window's output");
  expect(readFileSync(out, "utf8").trim()).toBe('[{"ns":[1,2,3,4]}]');

  // reset_state rewinds the file source of the running rule.
  const reset = (streamName: string, input: unknown) => d!.call("PUT", "/rules/ck/reset_state", { type: 1, params: { streamName, input } });
  const ok = await reset("s", { seen: [] });
  expect([ok.status, ok.text.trim()]).toEqual([200, "success"]);
  const bad = await reset("s", { line: 3 });
  expect(bad.status).toBe(400);
  expect(bad.text).toContain("invalid file source offset: expect seen");
  expect((await reset("x", {})).text).toContain("stream x not found in topo");

  // Deleting the rule deletes its checkpoints.
  expect((await d.call("DELETE", "/rules/ck")).status).toBe(200);
  expect(checkpointed("ck").count).toBe(-1);
});
