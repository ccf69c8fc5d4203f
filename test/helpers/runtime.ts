/** Test helpers for the streaming runtime: stream catalogs, a runtime env, waiting on conditions. */
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntimeEnv, type RuntimeEnv } from "../../lib/runtime/env.ts";
import { SourceHub } from "../../lib/runtime/sources.ts";
import { Rule, type RuleJson, type RunHandle } from "../../lib/runtime/rule.ts";
import { streamDef, type StreamDef } from "../../lib/plan/streams.ts";
import { parseStatement } from "../../lib/sql/parse.ts";
import type { CreateStatement } from "../../lib/sql/ast.ts";
import { createNetGuard } from "../../lib/net/guard.ts";

export { waitFor, waitForValue } from "./wait.ts";

const functions = createFunctionRegistry();

export function streams(...sql: string[]): Map<string, StreamDef> {
  const m = new Map<string, StreamDef>();
  for (const s of sql) {
    const c = parseStatement(s, functions) as CreateStatement;
    m.set(c.name, streamDef(c, s));
  }
  return m;
}

export interface TestRuntime {
  readonly env: RuntimeEnv;
  readonly hub: SourceHub;
  readonly logs: string[];
  /** The stream of each source that said it receives (`sourceReady`: an MQTT source once subscribed), one entry per call. */
  readonly ready: string[];
  rule(def: RuleJson, defs: Map<string, StreamDef>): Rule;
}

/**
 * A runtime for tests; private addresses are allowed here (`basic.enablePrivateNet`), since test
 * servers listen on loopback. `logs` keeps the lines at info level and above (debug lines are the
 * daemon's `--log-level debug`).
 */
export function testRuntime(p: Partial<RuntimeEnv> = {}): TestRuntime {
  const logs: string[] = [];
  const ready: string[] = [];
  const env = createRuntimeEnv({ dataDir: mkdtempSync(join(tmpdir(), "floe-data-")), log: (l, level) => void (level !== "debug" && logs.push(l)), sourceReady: (stream) => void ready.push(stream), sinkGraceMs: 1000, outbound: createNetGuard({ allowPrivate: true }), ...p });
  const hub = new SourceHub(env);
  return { env, hub, logs, ready, rule: (def, defs) => Rule.create(def, defs, env, hub) };
}

/** One status key of a run. */
export function metric(run: RunHandle, key: string): number | string {
  const m = run.metrics();
  const v = m[key];
  if (v === undefined) throw new Error(`no metric ${key} in ${Object.keys(m).join(", ")}`);
  return v;
}

/**
 * The runtimes and rules a test file starts, stopped (and their data servers closed) after each
 * test: push `{ t, rules }` and fill `rules` as they start.
 */
export function stoppedAfterEach(afterEach: (fn: () => Promise<void>) => void): { t: TestRuntime; rules: RunHandle[] }[] {
  const open: { t: TestRuntime; rules: RunHandle[] }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      for (const r of o.rules) await r.stop();
      o.t.env.dataServer.close();
    }
  });
  return open;
}

/** A run's metrics that do not depend on timing (latencies, times, connection state left out). */
export function timingFreeCounts(m: Record<string, unknown>, key: (k: string) => string = (k) => k): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) if (!/latency|last_invocation|_time$|connection_|lastStart|lastStop|nextStart/.test(k)) out[key(k)] = v;
  return out;
}
