/**
 * The benchmark harness (bench.md). For each workload: the rate ladder (5k, 20k, 50k,
 * 100k, then upward until a step fails), then the top passing step repeated (3 × 60 s by
 * default); writes bench/results/<date>-<workload>[-node-red].json and regenerates bench/RESULTS.md.
 *
 *   bun bench/run.ts [w1 w2 …] [--engine floe|node-red|floor] [--step-seconds 20] [--top-seconds 60] [--reps 3]
 *                    [--rates 5000,20000,50000,100000] [--max-rate 300000] [--reader lean|mqttjs] [--prof DIR]
 *   bun bench/run.ts --quick          one 10 s step at 20k msg/s of every workload (under 3 minutes)
 *   bun bench/run.ts --ceiling        the generator's own ceiling (publisher → broker → counting subscriber)
 *   bun bench/run.ts --soak [w2 w4]   one 120 s step at 50k msg/s: RSS after 30 s vs at the end
 *                    [--soak-seconds 600] [--soak-rate 100000]   (the 10 minutes at 100k msg/s)
 *   --bin PATH                        the floe executable to measure (default dist/floe)
 *   --warm-seconds 10                 warm-up at the step's rate before each measured send (JIT compilation
 *                                     runs 10–20 s into a new load; 0: the 500-message burst only)
 *   --engine-env K=V                  an environment variable for the engine only, repeatable (e.g. the unit's
 *                                     BUN_JSC_forceRAMSize=67108864, packaging/floe.service); not for the generator
 *   --latency                         floe's rows leave through an MQTT sink to the bench broker; a probe subscriber
 *                                     (bench/latency-probe.ts) reports publish → sink latency p50/p99/max per step and, in
 *                                     the same step, a plain subscriber's arrival of the input (the floor); window
 *                                     workloads report window close → sink. Saved as <date>-<workload>-latency.json
 *   Workloads: w1–w5 (bench.md), w1-qos1 (W1 at QoS 1 end to end), w2-1m (W2 over 1,000,000 devices)
 *   bun bench/run.ts --replay [w1 …]  replay throughput (bench/replay.ts) for the workloads
 *   bun bench/run.ts --vs-floor [w1 …] [--rates 100000] [--step-seconds 20] [--reps 3]
 *                                     floe and the floor (bench/floor.ts) in turn at each rate, floe / floor per pair
 *                                     (bench/results/<date>-floor-pairs.json; rows of other workloads that day are kept)
 *   bun bench/run.ts --report         regenerate bench/RESULTS.md from bench/results/
 *
 * The engine runs alone on CPU 1, the broker and the generator (this process) share CPU 0 (bench.md
 * §Method); FLOE_BENCH_CPUS=ENGINE,LOAD picks two others. Results of a machine other than x64 are
 * saved as bench/results/<date>-<name>-<arch>.json, their own rows in RESULTS.md.
 *
 * On a Raspberry Pi (W1 and W2 on arm64; a 64-bit OS, 4 cores). Not run on a Pi yet; the
 * arm64 executable itself was run on x64 under emulation (Debian's qemu-user-static and
 * libc6-arm64-cross; a script /tmp/floe-arm64 holding
 * `exec qemu-aarch64-static -L /usr/aarch64-linux-gnu dist/floe-linux-arm64 "$@"`): W1–W5 replays of
 * 100k records give the x64 build's output byte for byte, and
 * `bun bench/run.ts w1 w2 --rates 2000 --max-rate 2000 --reps 0 --no-save --warm-seconds 2 --bin /tmp/floe-arm64`
 * proves both steps exact (figures under emulation mean nothing).
 *   x64 machine:  make build                          (also cross-builds dist/floe-linux-arm64)
 *   Pi:           sudo apt-get install mosquitto nodejs npm     (taskset comes with util-linux)
 *                 git clone <repo> floe && cd floe && npm install   (Bun for linux-aarch64 from npm)
 *                 mkdir -p dist && scp <x64>:<repo>/dist/floe-linux-arm64 dist/
 *                 sudo systemctl disable --now mosquitto   (the harness starts its own brokers)
 *                 node_modules/.bin/bun bench/run.ts --ceiling   (the generator's ceiling on one Pi core)
 *                 node_modules/.bin/bun bench/run.ts w1 w2  (the ladder stops at the first failed step)
 *   On arm64 the engine defaults to dist/floe-linux-arm64 (--bin PATH for another; without either
 *   binary, `bun cli.ts`). `make build` on the Pi works too but fetches Bun's x64 runtime to build
 *   dist/floe first. FLOE_BENCH_CPUS=3,2 keeps both CPUs off CPU 0, where the Pi takes its
 *   interrupts. A Pi that throttles (`vcgencmd get_throttled` not 0x0 after a run) measured its heat.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ARCH_SUFFIX } from "./arch.ts";
import { nodeRedSupports, type EngineKind } from "./engines.ts";
import { CPUS, load, pinSelf } from "./meter.ts";
import { writeReport } from "./report.ts";
import { runStep, summary, WARM_SECONDS, type StepResult } from "./step.ts";
import { LADDER_IDS, WORKLOAD_IDS, WORKLOADS, type WorkloadId } from "./workloads.ts";

const ROOT = join(import.meta.dir, "..");
const RESULTS = join(ROOT, "bench/results");
const BUN = "node_modules/.bin/bun";

const { values: a, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    engine: { type: "string", default: "floe" },
    "step-seconds": { type: "string", default: "20" },
    "warm-seconds": { type: "string", default: String(WARM_SECONDS) },
    "top-seconds": { type: "string", default: "60" },
    reps: { type: "string", default: "3" },
    rates: { type: "string", default: "5000,20000,50000,100000" },
    "max-rate": { type: "string", default: "300000" },
    reader: { type: "string" },
    bin: { type: "string" },
    "engine-env": { type: "string", multiple: true },
    "soak-seconds": { type: "string", default: "120" },
    "soak-rate": { type: "string", default: "50000" },
    prof: { type: "string" },
    quick: { type: "boolean" },
    ceiling: { type: "boolean" },
    soak: { type: "boolean" },
    replay: { type: "boolean" },
    "vs-floor": { type: "boolean" },
    report: { type: "boolean" },
    "no-save": { type: "boolean" },
    latency: { type: "boolean" },
  },
});

// The engine runs in its own directory: a relative --bin is resolved here.
const BIN = a.bin ? resolve(a.bin) : undefined;
/** --engine-env K=V …: set in the engine's environment only (the harness and generator keep theirs). */
const ENGINE_ENV: Record<string, string> = {};
for (const kv of a["engine-env"] ?? []) {
  const i = kv.indexOf("=");
  if (i <= 0) throw new Error(`--engine-env wants K=V, got ${kv}`);
  ENGINE_ENV[kv.slice(0, i)] = kv.slice(i + 1);
}
const WARM = Number(a["warm-seconds"]);
if (!(WARM >= 0)) throw new Error(`--warm-seconds wants a number of seconds, got ${a["warm-seconds"]}`);
/** Flags every reproducing command line carries: the engine's environment and a warm-up other than the default. */
const envFlags = Object.entries(ENGINE_ENV).map(([k, v]) => ` --engine-env ${k}=${v}`).join("") + (WARM !== WARM_SECONDS ? ` --warm-seconds ${WARM}` : "") + (a.latency ? " --latency" : "");
const today = () => new Date().toISOString().slice(0, 10);
const machine = () => ({ arch: process.arch, cpus: navigator.hardwareConcurrency, pinned: CPUS, bun: Bun.version, node: Bun.spawnSync(["node", "--version"]).stdout.toString().trim() });
/** Results of another architecture (a Raspberry Pi) are kept apart: `<date>-w1-arm64.json`. */
const resultPath = (name: string) => join(RESULTS, `${today()}-${name}${ARCH_SUFFIX}.json`);

async function save(name: string, data: object): Promise<string> {
  if (a["no-save"]) return "(not saved: --no-save)";
  if (!existsSync(RESULTS)) mkdirSync(RESULTS, { recursive: true });
  const path = resultPath(name);
  await Bun.write(path, JSON.stringify({ date: today(), machine: machine(), ...data }, null, 2) + "\n");
  return path;
}

function median(xs: number[]): number {
  const s = xs.slice().sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
}

/** The ladder: the given rates, then upward (×1.2, ×1.25, … rounded) until max. */
function ladder(rates: number[], max: number): number[] {
  const out = rates.slice();
  const more = [120_000, 150_000, 200_000, 250_000, 300_000, 400_000, 500_000];
  for (const r of more) if (r > out[out.length - 1]! && r <= max) out.push(r);
  return out;
}

function cmdFor(engine: EngineKind, w: WorkloadId, rate: number, seconds: number): string {
  return `${BUN} bench/run.ts ${w} --engine ${engine} --rates ${rate} --max-rate ${rate} --step-seconds ${seconds} --reps 0 --no-save${a.bin ? ` --bin ${a.bin}` : ""}${envFlags}`;
}

/** A step whose generator was off schedule does not count (bench.md §3): it is run once more. */
async function measured(engine: EngineKind, id: WorkloadId, rate: number, seconds: number, invalid: StepResult[]): Promise<StepResult> {
  const opts = { reader: a.reader, profDir: a.prof, bin: BIN, env: ENGINE_ENV, warmSeconds: WARM, latency: a.latency, command: cmdFor(engine, id, rate, seconds) };
  const r = await runStep(engine, WORKLOADS[id], rate, seconds, opts);
  if (r.on_schedule) return r;
  console.log(`off schedule, run again: ${summary(r)}`);
  invalid.push(r);
  return runStep(engine, WORKLOADS[id], rate, seconds, opts);
}

async function workload(engine: EngineKind, id: WorkloadId): Promise<void> {
  const w = WORKLOADS[id];
  const stepS = Number(a["step-seconds"]);
  const topS = Number(a["top-seconds"]);
  const reps = Number(a.reps);
  const steps: StepResult[] = [];
  const invalid: StepResult[] = [];
  const name = (engine === "floe" ? id : `${id}-${engine}`) + (a.latency ? "-latency" : "");
  const persist = (extra: object = {}) => save(name, { workload: id, title: w.title, engine, method: { step_seconds: stepS, top_seconds: topS, reps, conns: 8 }, ladder: steps, off_schedule_reruns: invalid, ...extra });
  for (const rate of ladder(a.rates!.split(",").map(Number), Number(a["max-rate"]))) {
    const r = await measured(engine, id, rate, stepS, invalid);
    console.log(summary(r));
    steps.push(r);
    await persist();
    if (!r.pass) break;
  }
  const passed = steps.filter((s) => s.pass);
  let top: object | null = null;
  const attempts: object[] = [];
  // The top step, repeated at full length; if a repetition fails, the step below is repeated too.
  const candidates = passed.map((s) => s.rate).reverse().slice(0, 2);
  for (const rate of reps > 0 ? candidates : []) {
    const runs: StepResult[] = [];
    for (let i = 0; i < reps; i++) {
      const r = await measured(engine, id, rate, topS, invalid);
      console.log(`rep ${i + 1}/${reps}: ${summary(r)}`);
      runs.push(r);
    }
    const stat = (k: "us_per_msg" | "cpu_pct" | "peak_rss_mib" | "peak_anon_mib" | "gap") => {
      const xs = runs.map((r) => r[k]);
      return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
    };
    const ok = runs.filter((r) => r.pass).length;
    top = { rate, seconds: topS, passed: ok, of: reps, us_per_msg: stat("us_per_msg"), cpu_pct: stat("cpu_pct"), peak_rss_mib: stat("peak_rss_mib"), peak_anon_mib: stat("peak_anon_mib"), gap: stat("gap"), runs };
    attempts.push(top);
    await persist({ top, top_attempts: attempts });
    if (ok === reps) break;
  }
  const failed = steps.find((s) => !s.pass);
  await persist({ top, top_attempts: attempts, failed_at: failed ? { rate: failed.rate, why: failed.why, on_schedule: failed.on_schedule } : null });
}

async function soak(id: WorkloadId, rate = 50_000, seconds = 120): Promise<void> {
  const w = WORKLOADS[id];
  const r = await runStep("floe", w, rate, seconds, { reader: a.reader, bin: BIN, env: ENGINE_ENV, warmSeconds: WARM, command: `${BUN} bench/run.ts --soak ${id} --soak-seconds ${seconds} --soak-rate ${rate}${envFlags}` });
  console.log(summary(r));
  // Peak RSS and anon in the first vs the last minute of the send (a quarter of it when shorter);
  // the send's own wall time (a loaded machine stretches it).
  const wall = Math.max(seconds, r.gen.wall_s);
  const span = Math.min(60, wall / 4);
  const peak = (from: number, to: number, col: 1 | 2) => Math.max(0, ...r.rss_series.filter(([t]) => t >= from && t <= to).map((s) => s[col]));
  const pct = (x: number, y: number) => (x ? (((y - x) / x) * 100).toFixed(1) : "—");
  const [r0, r1, a0, a1] = [peak(0, span, 1), peak(wall - span, wall + 1, 1), peak(0, span, 2), peak(wall - span, wall + 1, 2)];
  console.log(`soak ${id} (send ${wall.toFixed(0)} s): peak RSS first ${span.toFixed(0)} s ${(r0 / 1024).toFixed(1)} MiB, last ${span.toFixed(0)} s ${(r1 / 1024).toFixed(1)} MiB (${pct(r0, r1)} %); peak anon ${(a0 / 1024).toFixed(1)} → ${(a1 / 1024).toFixed(1)} MiB (${pct(a0, a1)} %)`);
  const at30 = r.rss_series.filter(([t]) => t <= 30).pop()?.[1] ?? 0;
  const end = r.rss_series[r.rss_series.length - 1]?.[1] ?? 0;
  await save(`soak-${id}`, { workload: id, rate, seconds, rss_at_30s_kb: at30, rss_at_end_kb: end, growth_pct: Math.round(((end - at30) / at30) * 1000) / 10, step: r });
}

/**
 * floe against the floor, step by step in turn (floe, floor, floe, floor …) so that both see the same
 * machine: the ratio of each pair is the figure, not the absolute µs/msg of either.
 */
async function vsFloor(ids: WorkloadId[], rates: number[], seconds: number, reps: number): Promise<void> {
  type Pair = { workload: WorkloadId; rate: number; seconds: number; floe: StepResult; floor: StepResult; ratio_us: number; ratio_rss: number; ratio_anon: number };
  const pairs: Pair[] = [];
  const file = resultPath("floor-pairs");
  const r2 = (x: number) => Math.round(x * 100) / 100;
  for (const id of ids) {
    for (const rate of rates) {
      for (let i = 0; i < Math.max(1, reps); i++) {
        const cmd = `${BUN} bench/run.ts --vs-floor ${id} --rates ${rate} --step-seconds ${seconds} --reps 1${envFlags}`;
        const floe = await runStep("floe", WORKLOADS[id], rate, seconds, { reader: a.reader, bin: BIN, env: ENGINE_ENV, warmSeconds: WARM, command: cmd });
        console.log(summary(floe));
        const floor = await runStep("floor", WORKLOADS[id], rate, seconds, { env: ENGINE_ENV, warmSeconds: WARM, command: cmd });
        console.log(summary(floor));
        const p = { workload: id, rate, seconds, floe, floor, ratio_us: r2(floe.us_per_msg / floor.us_per_msg), ratio_rss: r2(floe.peak_rss_mib / floor.peak_rss_mib), ratio_anon: r2(floe.peak_anon_mib / floor.peak_anon_mib) };
        console.log(`${id} ${rate}/s pair ${i + 1}: floe / floor = ${p.ratio_us} (µs/msg ${floe.us_per_msg} / ${floor.us_per_msg}), RSS ${p.ratio_rss}×, anon ${p.ratio_anon}×`);
        pairs.push(p);
      }
    }
  }
  if (a["no-save"]) return;
  // Pairs of workloads or rates not run now stay in today's file; this run's replace theirs.
  const previous = existsSync(file) ? ((JSON.parse(await Bun.file(file).text()) as { pairs?: Pair[] }).pairs ?? []) : [];
  const kept = previous.filter((p) => !(ids.includes(p.workload) && rates.includes(p.rate)));
  await save("floor-pairs", { pairs: [...kept, ...pairs] });
}

pinSelf(CPUS.load);
const ids = (positionals.length ? positionals : WORKLOAD_IDS) as WorkloadId[];
if (a.latency && a.engine !== "floe") throw new Error("--latency measures floe (its MQTT sink); the subscriber in the same step is the floor");
for (const id of ids) if (!(id in WORKLOADS)) throw new Error(`unknown workload ${id}`);
console.log(`load average ${load().join(" ")}`);
if (a.report) {
  // only the report
} else if (a.ceiling) {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "bench/gen.ts"), "--ceiling", "--rates", "50000,100000,120000,150000,200000", "--seconds", "20", "--out", resultPath("gen-ceiling")], {
    stdout: "ignore",
    stderr: "inherit",
  });
  if (p.exitCode !== 0) throw new Error("generator ceiling run failed");
} else if (a.replay) {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "bench/replay.ts"), ...ids, "--runs", "3", ...(BIN ? ["--bin", BIN] : [])], { stdout: "inherit", stderr: "inherit" });
  if (p.exitCode !== 0) throw new Error("replay failed");
} else if (a["vs-floor"]) {
  await vsFloor(ids, a.rates!.split(",").map(Number), Number(a["step-seconds"]), Number(a.reps));
} else if (a.soak) {
  for (const id of positionals.length ? ids : (["w2", "w4"] as WorkloadId[])) await soak(id, Number(a["soak-rate"]), Number(a["soak-seconds"]));
} else if (a.quick) {
  const rows: StepResult[] = [];
  for (const id of ids) {
    const r = await runStep("floe", WORKLOADS[id], 20_000, 10, { reader: a.reader, bin: BIN, warmSeconds: WARM, command: `${BUN} bench/run.ts --quick ${id}` });
    console.log(summary(r));
    rows.push(r);
  }
  console.log(`wrote ${await save("quick", { steps: rows })}`);
  if (rows.some((r) => !r.pass)) process.exitCode = 1;
} else {
  const engine = a.engine as EngineKind;
  for (const id of positionals.length ? ids : LADDER_IDS) {
    if (engine === "node-red" && !nodeRedSupports(WORKLOADS[id])) continue;
    await workload(engine, id);
  }
}
if (!a.quick && !a["no-save"]) console.log(`wrote ${await writeReport(ROOT)}`);
process.exit(process.exitCode ?? 0);
