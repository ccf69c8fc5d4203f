/**
 * The safe start: `floe serve --safe`, and by itself after 3 starts in a row that
 * ended early, serves REST without starting rules or loading UDF scripts; both can be inspected
 * and deleted, GET / says so, the log says why. A graceful stop counts the start as a good one.
 */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { MARKER } from "../../lib/server/safe-mode.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

/** A home with a running rule and a UDF, left by a daemon stopped gracefully. */
async function seeded(): Promise<string> {
  const dir = tempHome();
  const d = await startFloe(dir);
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="t/in")' })).status).toBe(201);
  expect((await d.call("POST", "/udf/javascript", { id: "twice", description: "", script: "function twice(x) { return x * 2; }", isAgg: false })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "r1", sql: "SELECT twice(v) AS w FROM s", actions: [{ nop: {} }] })).status).toBe(201);
  expect(await ruleState(d, "r1")).toBe("running");
  expect(await d.stop()).toBe(0);
  return dir;
}

async function ruleState(d: DaemonProc, id: string): Promise<string> {
  return (JSON.parse((await d.call("GET", `/rules/${id}/status`)).text) as { status: string }).status;
}

async function info(d: DaemonProc): Promise<Record<string, unknown>> {
  return JSON.parse((await d.call("GET", "/")).text) as Record<string, unknown>;
}

test("--safe serves REST with rules registered but stopped and UDF scripts not loaded; both can be deleted", async () => {
  const dir = await seeded();
  const d = await startFloe(dir, {}, ["--safe"]);
  try {
    expect(await info(d)).toMatchObject({ safeMode: true, safeModeReason: "started with --safe" });
    expect(await ruleState(d, "r1")).toBe("stopped");
    expect(JSON.parse((await d.call("GET", "/udf/javascript")).text)).toEqual(["twice"]);
    // The script is listed but not loaded: a rule calling it cannot be planned.
    const v = await d.call("POST", "/rules/validate", { id: "r2", sql: "SELECT twice(v) AS w FROM s", actions: [{ nop: {} }] });
    expect(v.text).toContain("twice");
    expect(d.stderr()).toMatch(/level=warn msg="safe mode: started with --safe; rules are not started and UDF scripts are not loaded"/);
    expect((await d.call("DELETE", "/rules/r1")).status).toBe(200);
    expect((await d.call("DELETE", "/udf/javascript/twice")).status).toBe(200);
  } finally {
    await d.stop();
  }
  // The next plain start is a normal one.
  const n = await startFloe(dir);
  try {
    expect((await info(n)).safeMode).toBeUndefined();
    expect(JSON.parse((await n.call("GET", "/rules")).text)).toEqual([]);
  } finally {
    await n.stop();
  }
}, 60_000);

test("after 3 starts in a row that ended early (kill -9), the 4th start is safe; a graceful stop resets the count", async () => {
  const dir = await seeded();
  const env = { FLOE_SAFE_AFTER_CRASHES: "3" };
  for (let i = 0; i < 3; i++) {
    const d = await startFloe(dir, env);
    expect((await info(d)).safeMode).toBeUndefined();
    expect(await d.stop("SIGKILL")).not.toBe(0);
  }
  expect(existsSync(join(dir, "data", MARKER))).toBe(true);
  const safe = await startFloe(dir, env);
  try {
    const i = await info(safe);
    expect(i.safeMode).toBe(true);
    expect(i.safeModeReason).toStartWith("the last 3 starts ended within 30 s (a crash or a hang at start)");
    expect(await ruleState(safe, "r1")).toBe("stopped");
    expect(safe.stderr()).toContain("level=warn");
  } finally {
    expect(await safe.stop()).toBe(0);
  }
  expect(existsSync(join(dir, "data", MARKER))).toBe(false);
  const again = await startFloe(dir, env);
  try {
    expect((await info(again)).safeMode).toBeUndefined();
    expect(await ruleState(again, "r1")).toBe("running");
  } finally {
    await again.stop();
  }
}, 60_000);
