/**
 * What rule tracing costs per message (rest-api.md §15): W1's rule (filter + project, a nop sink)
 * run in-process over a memory stream, with
 *   off        tracing never started (the plain push chain),
 *   restored   tracing started then stopped (the traced wiring swapped out again),
 *   on         tracing on, `always`, every span kept in a local store of 2048 traces,
 *   base       optional: the same rule on another checkout's lib (`--base /work/main`: the code
 *              before tracing existed).
 * Each sample runs one mode in a fresh process (a warm-up round, then the measured one), samples
 * interleaved with the order rotating, so no mode inherits another's JIT or heap state. Reports CPU
 * (user + system) per message — the JavaScript thread's, and the whole process's with the
 * collector's threads — the median of the samples, and each mode's ratio to `off`. Timing numbers
 * on a shared machine are noisy: read the ratios.
 *   node_modules/.bin/bun bench/trace-cost.ts [messages per sample] [--rounds n] [--base DIR] [--modes off,on,…]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const baseDir = flag("--base");
const onlyArg = flag("--modes");
const ROUNDS = Number(flag("--rounds") ?? 9);
const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 100_000);
const W1 = "SELECT id, device, temp, speed * 3.6 AS speed_kmh FROM telem WHERE temp > 21.0";
const STREAM = 'CREATE STREAM telem () WITH (TYPE="memory", DATASOURCE="bench/telemetry")';

type Obj = Record<string, unknown>;
interface Lib {
  createRuntimeEnv(p: Obj): { pubsub: { publish(topic: string, rows: Obj): Promise<void> | undefined } };
  SourceHub: new (env: unknown) => unknown;
  Rule: {
    create(def: Obj, streams: Map<string, unknown>, env: unknown, hub: unknown): BenchRule;
  };
  streams: Map<string, unknown>;
  TraceHub?: new (settings: Obj, log: (l: string) => void, dataDir: string) => unknown;
}
interface BenchRule {
  /** A run handle from checkouts where the runtime returns one, else nothing. */
  start(): Promise<BenchRun | undefined>;
}
/** A run: the rule itself on older checkouts, the run handle on newer ones. */
interface BenchRun {
  stop(): Promise<void>;
  status?(): Record<string, unknown>;
  metrics?(): Record<string, unknown>;
  trace?(strategy: "always" | "head" | undefined): void;
}

async function load(root: string, withTrace: boolean): Promise<Lib> {
  const m = (p: string) => import(join(root, "lib", p));
  const [env, sources, rule, plan, parse, fns] = await Promise.all([
    m("runtime/env.ts"),
    m("runtime/sources.ts"),
    m("runtime/rule.ts"),
    m("plan/streams.ts"),
    m("sql/parse.ts"),
    m("functions/index.ts"),
  ]);
  // Older trees name the factory createCatalog.
  const c = parse.parseStatement(STREAM, (fns.createFunctionRegistry ?? fns.createCatalog)());
  const streams = new Map([[c.name, plan.streamDef(c, STREAM)]]);
  const lib: Lib = { createRuntimeEnv: env.createRuntimeEnv, SourceHub: sources.SourceHub, Rule: rule.Rule, streams };
  if (withTrace) lib.TraceHub = (await m("runtime/trace/hub.ts")).TraceHub;
  return lib;
}

/** W1's telemetry rows (bench/workloads.ts): 1,000 devices, 139 of every 150 pass the filter. */
const rows: Obj[] = [];
for (let k = 0; k < N; k++) rows.push({ id: k, device: `dev-${k % 1000}`, temp: 20 + (k % 150) / 10, speed: (k % 97) * 0.5 });
const expected = rows.filter((r) => (r.temp as number) > 21).length;

type Mode = "off" | "restored" | "on" | "base";

/** CPU in µs: the main (JavaScript) thread's, and the whole process's (the collector's threads too). */
interface Cpu {
  thread: number;
  process: number;
}

/** One round: a fresh rule, N messages in, every result out; the CPU spent. */
async function round(lib: Lib, mode: Mode): Promise<Cpu> {
  const traces = lib.TraceHub ? new lib.TraceHub({ serviceName: "bench", enableRemoteCollector: false, remoteEndpoint: "", localTraceCapacity: 2048, enableLocalStorage: false }, () => {}, "") : undefined;
  const env = lib.createRuntimeEnv({ dataDir: mkdtempSync(join(tmpdir(), "floe-trace-bench-")), log: () => {}, ...(traces ? { traces } : {}) });
  const hub = new lib.SourceHub(env);
  const rule = lib.Rule.create({ id: "w1", sql: W1, actions: [{ nop: {} }] }, lib.streams, env, hub);
  const handle = await rule.start();
  const run = (handle ?? rule) as BenchRun;
  if (mode === "on" || mode === "restored") run.trace!("always");
  if (mode === "restored") run.trace!(undefined);
  const out = () => (run.metrics ? run.metrics() : run.status!())["sink_nop_0_0_records_out_total"] as number;
  // process.cpuUsage counts every thread, the collector's too: let the previous round's garbage
  // (the traced rounds leave much) be collected before this round is measured.
  Bun.gc(true);
  await Bun.sleep(100);
  Bun.gc(true);
  const t0 = process.threadCpuUsage();
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const p = env.pubsub.publish("bench/telemetry", rows[i]!);
    if (p) await p;
  }
  while (out() < expected) await new Promise((r) => setImmediate(r));
  const t = process.threadCpuUsage(t0);
  const c = process.cpuUsage(c0);
  if (out() !== expected) throw new Error(`${mode}: ${out()} results, want ${expected}`);
  await run.stop();
  return { thread: t.user + t.system, process: c.user + c.system };
}

const here = resolve(import.meta.dir, "..");
const child = flag("--child") as Mode | undefined;

if (child) {
  // A sample: one mode in a process of its own (no other module copy, no other mode's JIT or
  // heap state), one warm-up round, then the measured one, printed as JSON.
  const lib = await load(child === "base" ? resolve(baseDir!) : here, child !== "base");
  await round(lib, child);
  console.log(JSON.stringify(await round(lib, child)));
  process.exit(0);
}

const only = onlyArg?.split(",") as Mode[] | undefined;
const modes = (["off", "restored", "on", "base"] as Mode[]).filter((m) => (m !== "base" || baseDir) && (!only || only.includes(m)));

function sample(m: Mode): Cpu {
  const cmd = [process.execPath, import.meta.path, String(N), "--child", m, ...(baseDir ? ["--base", baseDir] : [])];
  const p = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${m}: ${p.stderr.toString()}`);
  return JSON.parse(p.stdout.toString().trim().split("\n").pop()!) as Cpu;
}

// Interleaved samples, the order rotating each round, so drift and load hit every mode alike.
const samples: Record<string, Cpu[]> = {};
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < modes.length; k++) {
    const m = modes[(k + r) % modes.length]!;
    (samples[m] ??= []).push(sample(m));
  }
}
const med = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const perMsg = (m: Mode, k: keyof Cpu) => med(samples[m]!.map((c) => c[k])) / N;

console.log(`W1 in-process (memory stream, nop sink), ${N} messages per sample (${expected} results), median of ${ROUNDS} interleaved samples, each in a fresh process after a warm-up round:`);
console.log(`  mode      main-thread CPU/msg  ratio to off   process CPU/msg  ratio to off`);
for (const m of modes) {
  const th = perMsg(m, "thread");
  const pr = perMsg(m, "process");
  console.log(
    `  ${m.padEnd(9)} ${th.toFixed(3).padStart(9)} µs ${(th / perMsg("off", "thread")).toFixed(3).padStart(12)}    ${pr.toFixed(3).padStart(9)} µs ${(pr / perMsg("off", "process")).toFixed(3).padStart(12)}`,
  );
}
