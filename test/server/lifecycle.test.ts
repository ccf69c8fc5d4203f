/** The rule state machine and the patrol tick (rest-api.md §6.1, rules-and-sinks.md §6–§7), with a fake run. */
import { expect, test } from "bun:test";
import { UTC } from "../../lib/value/time.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { parseCron } from "../../lib/server/cron.ts";
import { RuleLifecycle, type HeldRun, type RunExit, type RunFactory } from "../../lib/server/lifecycle.ts";
import { nextStartTimestamp, patrol } from "../../lib/server/scheduler.ts";
import { parseStoredRule } from "../../lib/store/stored-rule.ts";

const functions = createFunctionRegistry();

const def = (options: object = {}) => parseStoredRule(JSON.stringify({ id: "r", sql: "select * from s", actions: [{ nop: {} }], options }), functions, {});

function fakeRuntime(fail?: string) {
  let exit: ((e: RunExit) => void) | undefined;
  let runs = 0;
  const factory: RunFactory = (_d, onExit) => {
    if (fail) throw new Error(fail);
    exit = onExit;
    runs++;
    const run: HeldRun = { nodes: () => [], topo: () => ({ sources: ["source_s"], edges: {} }), stop: async () => {} };
    return run;
  };
  return { factory, end: (e: RunExit) => exit!(e), runs: () => runs };
}

test("start, stop and the last-will messages", async () => {
  const rt = fakeRuntime();
  const lc = new RuleLifecycle(def(), rt.factory, () => {});
  expect(lc.state).toBe("stopped");
  await lc.startNow();
  expect([lc.state, lc.message]).toEqual(["running", ""]);
  await lc.startNow();
  expect(rt.runs()).toBe(2);
  await lc.stop();
  expect([lc.state, lc.message]).toEqual(["stopped", "canceled manually"]);
  expect(lc.lastTopo?.sources).toEqual(["source_s"]);
});

test("a start failure is `stopped by error` with the error as message", async () => {
  const lc = new RuleLifecycle(def(), fakeRuntime("fail to get stream s, please check if stream is created").factory, () => {});
  await lc.startNow();
  expect([lc.state, lc.message]).toEqual(["stopped by error", "fail to get stream s, please check if stream is created"]);
});

test("EOF stops with `done` and reports it; a runtime error is `stopped by error` with its message", async () => {
  const rt = fakeRuntime();
  let eof = "";
  const lc = new RuleLifecycle(def(), rt.factory, (id) => (eof = id));
  await lc.startNow();
  rt.end({ kind: "eof" });
  await lc.settled();
  expect([lc.state, lc.message, eof]).toEqual(["stopped", "done", "r"]);
  await lc.startNow();
  rt.end({ kind: "error", message: "boom" });
  await lc.settled();
  expect([lc.state, lc.message]).toEqual(["stopped by error", "boom"]);
});

test("a scheduled rule waits for the scheduler, which starts and stops it", async () => {
  const lc = new RuleLifecycle(def({ cronDatetimeRange: [{ beginTimestamp: 1000, endTimestamp: 5000 }] }), fakeRuntime().factory, () => {});
  await lc.start();
  expect(lc.state).toBe("stopped: waiting for next schedule.");
  patrol([lc], 2000, UTC, () => {});
  await lc.settled();
  expect(lc.state).toBe("running");
  patrol([lc], 6000, UTC, () => {});
  await lc.settled();
  expect([lc.state, lc.message]).toEqual(["stopped: waiting for next schedule.", "schedule terminated"]);
});

test("restartStrategy restarts a rule stopped by error at the patrol tick", async () => {
  const lc = new RuleLifecycle(def({ restartStrategy: { attempts: 1 } }), fakeRuntime().factory, () => {});
  lc.state = "stopped by error";
  let restarted = false;
  patrol([lc], Date.now(), UTC, () => (restarted = true));
  expect(restarted).toBe(true);
});

test("cron: next fire times and nextStartTimestamp", () => {
  const t0 = Date.UTC(2025, 0, 1, 10, 7, 30);
  expect(parseCron("*/5 * * * *", UTC).next(t0)).toBe(Date.UTC(2025, 0, 1, 10, 10));
  expect(parseCron("0 12 * * MON", UTC).next(t0)).toBe(Date.UTC(2025, 0, 6, 12, 0));
  expect(parseCron("@hourly", UTC).next(t0)).toBe(Date.UTC(2025, 0, 1, 11, 0));
  expect(nextStartTimestamp(def({ cron: "0 * * * *", duration: "10m" }), t0, UTC)).toBe(Date.UTC(2025, 0, 1, 11, 0));
  expect(nextStartTimestamp(def(), t0, UTC)).toBe(0);
  expect(() => parseCron("* * *", UTC)).toThrow("expected exactly 5 fields");
});
