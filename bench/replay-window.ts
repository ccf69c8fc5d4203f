/**
 * The window stage alone: 1,000,000 pre-decoded W2/W4/W5 records pushed
 * straight into a rule topology on the virtual clock — no file, no JSON — on both evaluators,
 * next to a window-less rule (a filter that keeps nothing): the cost of the rest of the path.
 *   node_modules/.bin/bun bench/replay-window.ts [records]
 */
import { createFunctionRegistry } from "../lib/functions/index.ts";
import { Tuple } from "../lib/expr/row.ts";
import { UTC } from "../lib/value/time.ts";
import type { Obj } from "../lib/value/values.ts";
import { planSelect } from "../lib/plan/plan.ts";
import type { StreamDef } from "../lib/plan/streams.ts";
import type { SinkNode } from "../lib/core/sink.ts";
import { Topology } from "../lib/runtime/topology.ts";
import { parseRuleFile } from "../lib/sql/parse.ts";
import { VirtualClock } from "../lib/ops/window/clock.ts";
import { WORKLOADS, type Workload } from "./replay-gen.ts";
import { join } from "node:path";

const functions = createFunctionRegistry();

const N = Number(process.argv[2] ?? 1_000_000);
const ROOT = join(import.meta.dir, "..");
const START = 1_700_000_000_000;
const defs = new Map<string, StreamDef>([["telem", { name: "telem", kind: "stream", fields: null, options: {}, statement: "" }]]);

function records(devices: number): Obj[] {
  const out: Obj[] = new Array(N);
  // JSON.parse'd like the pipe's input, so strings are flat and objects share a shape.
  for (let k = 0; k < N; k++) out[k] = JSON.parse(`{"id":"w_${k}","device":"dev_${k % devices}","temp":${20.05 + (k % 150) / 10},"speed":${(k % 1300) / 10 + 0.05}}`) as Obj;
  return out;
}

function run(sql: string, rows: Obj[], evaluator: "auto" | "buffered"): number {
  const clock = new VirtualClock(START);
  const env = { now: () => clock.now(), zone: UTC, ruleId: "bench", ruleStart: START };
  const { plan } = planSelect(parseRuleFile(sql, functions).select, defs, { functions, env, zone: UTC, windowEvaluator: evaluator });
  let emissions = 0;
  const sink: SinkNode = { metrics: [], push: () => void emissions++, end() {} };
  const topo = new Topology(plan, { now: () => clock.now(), sendError: false, clock, zone: UTC }, [sink]);
  const t0 = performance.now();
  for (let k = 0; k < N; k++) {
    const ts = START + Math.floor(k / 10); // 10,000 records per virtual second
    clock.advance(ts);
    topo.ingest("telem", new Tuple(rows[k]!, null, ts, "telem"));
  }
  return performance.now() - t0;
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const w of ["w2", "w4", "w5"] as Workload[]) {
  const rows = records(WORKLOADS[w].devices);
  const sql = await Bun.file(join(ROOT, WORKLOADS[w].rule)).text();
  run(sql, rows, "auto"); // warm-up (JIT), not counted
  const base: number[] = [];
  const inc: number[] = [];
  const buf: number[] = [];
  // Interleaved, so that a noisy neighbour hits the three alike.
  for (let i = 0; i < 7; i++) {
    base.push(run("SELECT device FROM telem WHERE speed > 1000", rows, "auto"));
    inc.push(run(sql, rows, "auto"));
    buf.push(run(sql, rows, "buffered"));
  }
  const ns = (xs: number[]) => ((median(xs) * 1e6) / N).toFixed(0);
  console.log(`${w}: ns per record (median of 7): no window ${ns(base)}, incremental ${ns(inc)}, buffered ${ns(buf)}`);
}
