/**
 * Replay throughput and memory (bench.md "Also measured"): `floe run --replay` over 100,000 and
 * 1,000,000 records of each workload's rule, against the floor of reading and JSON.parse-ing the
 * same file in Bun. Reports records/s (wall and CPU), peak RSS (VmHWM sampled from
 * /proc/<pid>/status every 20 ms; getrusage's maxRSS is no check here, because a spawned child's
 * high-water mark starts at this process's RSS at fork time), and proves the output: windows → Σ n over
 * every emitted window equals the records, every device present; W1 → exactly the rows with
 * temp > 21.0, no duplicate id; W3 → one row per record, every topic present.
 *   make build && node_modules/.bin/bun bench/replay.ts [w1 … w5] [--runs N] [--rate R] [--bin PATH] [--options K=V] [--rule PATH] [--sizes 100000,1000000] [--no-save]
 * Writes bench/results/<date>-replay[-<options>][-<rule>][-<arch>].json (`--options windowEvaluator=buffered`
 * measures the buffered evaluator; `--rule bench/rules/w3-regex.sql` runs W3's data through
 * another rule with the same output proof, e.g. the regular-expression variant). Off x64 the default
 * executable is this machine's build (dist/floe-linux-arm64) and the file name ends in `-<arch>`.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { ARCH_SUFFIX, DEFAULT_FLOE_BIN } from "./arch.ts";
import { DEFAULT_RATE, replayPath, WORKLOADS, writeReplay, type Workload } from "./replay-gen.ts";

const ROOT = join(import.meta.dir, "..");
const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1]! : def;
};
const runs = Number(opt("--runs", "3"));
const rate = Number(opt("--rate", String(DEFAULT_RATE)));
const bin = opt("--bin", DEFAULT_FLOE_BIN);
const extra = opt("--options", "");
const ruleOverride = opt("--rule", "");
const noSaveAt = args.indexOf("--no-save");
const noSave = noSaveAt >= 0;
if (noSave) args.splice(noSaveAt, 1);
const workloads = (args.length ? args : ["w1", "w2", "w3", "w4", "w5"]) as Workload[];
const SIZES = opt("--sizes", "100000,1000000").split(",").map(Number);
if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`make build\` first`);

interface Run {
  wallMs: number;
  cpuMs: number;
  /** Peak RSS: the last VmHWM read from /proc while the process ran. */
  vmHwmKb: number;
  rows: number;
  /** Σ n over the windows (W2/W4/W5), distinct ids (W1). */
  sumN: number;
  devices: number;
}

function ruleOf(w: Workload): string {
  return ruleOverride || WORKLOADS[w].rule;
}

/** What the proof expects: Σ n (windows), rows (W1: temp > 21.0 on 139 of every 150; W3: one per record). */
function expectedRows(w: Workload, records: number): { rows: number | null; sumN: number } {
  if (w === "w1") {
    let n = 0;
    for (let k = 0; k < records; k++) if (k % 150 > 10) n++;
    return { rows: n, sumN: n };
  }
  if (w === "w3") return { rows: records, sumN: 0 };
  return { rows: null, sumN: records };
}

function status(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const line of readFileSync(`/proc/${pid}/status`, "utf8").split("\n")) {
      const m = /^(VmHWM|VmRSS|RssAnon):\s+(\d+) kB/.exec(line);
      if (m) out[m[1]!] = Number(m[2]);
    }
  } catch {
    // the process has exited between two samples
  }
  return out;
}

async function engine(w: Workload, file: string, records: number): Promise<Run> {
  const cmd = [bin, "run", join(ROOT, ruleOf(w)), "--input", file, "--replay", "--on-eof", "flush"];
  if (extra) cmd.push("-o", extra);
  const t0 = performance.now();
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  let hwm = 0;
  const sampler = setInterval(() => {
    const s = status(p.pid);
    if (s.VmHWM && s.VmHWM > hwm) hwm = s.VmHWM;
  }, 20);
  let rows = 0;
  let sumN = 0;
  const devices = new Set<string>();
  // W1 ids are `w1_0_<k>`: one bit per record proves each arrived once, in constant memory per record.
  const seen = new Uint8Array(w === "w1" ? (records >> 3) + 1 : 0);
  let distinct = 0;
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of p.stdout) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = lines.pop()!;
    for (const l of lines) {
      const r = JSON.parse(l) as { n?: number; device?: string; id?: string; topic?: string };
      rows++;
      if (w === "w1") {
        const k = Number(r.id!.slice(5));
        const bit = 1 << (k & 7);
        if (!(seen[k >> 3]! & bit)) {
          seen[k >> 3] = seen[k >> 3]! | bit;
          distinct++;
        }
      }
      else if (w === "w3") devices.add(r.topic!);
      else {
        sumN += r.n!;
        devices.add(r.device!);
      }
    }
  }
  const code = await p.exited;
  const wallMs = performance.now() - t0;
  clearInterval(sampler);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${await new Response(p.stderr).text()}`);
  const ru = p.resourceUsage()!;
  const cpuMs = Number(ru.cpuTime.total) / 1000;
  return { wallMs, cpuMs, vmHwmKb: hwm, rows, sumN: w === "w1" ? distinct : sumN, devices: w === "w1" ? WORKLOADS.w1.devices : devices.size };
}

/**
 * The floor: read the file and JSON.parse every line, in this Bun process. Returns wall ms and CPU
 * ms (user + system of this process over the loop): on a shared machine CPU is the comparable one.
 */
async function floor(file: string, records: number): Promise<{ wall: number; cpu: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const decoder = new TextDecoder();
  let rest = "";
  let n = 0;
  for await (const chunk of Bun.file(file).stream()) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = lines.pop()!;
    for (const l of lines) if (JSON.parse(l)) n++;
  }
  if (n !== records) throw new Error(`floor read ${n} records of ${records}`);
  const c = process.cpuUsage(c0);
  return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 };
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

const results: unknown[] = [];
for (const w of workloads) {
  for (const records of SIZES) {
    const file = replayPath(ROOT, w, records, rate);
    if (!existsSync(file)) await writeReplay(file, w, records, rate);
    const engines: Run[] = [];
    const floors: number[] = [];
    const floorCpus: number[] = [];
    for (let i = 0; i < runs; i++) {
      const f = await floor(file, records);
      floors.push(f.wall);
      floorCpus.push(f.cpu);
      engines.push(await engine(w, file, records));
    }
    const last = engines[engines.length - 1]!;
    const want = expectedRows(w, records);
    const proof = (want.rows === null || last.rows === want.rows) && last.sumN === want.sumN && last.devices === WORKLOADS[w].devices;
    const wall = median(engines.map((r) => r.wallMs));
    const cpu = median(engines.map((r) => r.cpuMs));
    const f = median(floors);
    const fc = median(floorCpus);
    const hwm = Math.max(...engines.map((r) => r.vmHwmKb));
    const row = {
      load: loadavg().map((x) => Math.round(x * 100) / 100),
      workload: w,
      records,
      rate,
      runs,
      recordsPerSecWall: Math.round(records / (wall / 1000)),
      recordsPerSecCpu: Math.round(records / (cpu / 1000)),
      wallMs: Math.round(wall),
      cpuMs: Math.round(cpu),
      floorRecordsPerSec: Math.round(records / (f / 1000)),
      floorRatio: Number((f / wall).toFixed(3)),
      floorRecordsPerSecCpu: Math.round(records / (fc / 1000)),
      /** Floor CPU / engine CPU: the ratio that holds on a loaded machine (the issue's targets use it). */
      floorRatioCpu: Number((fc / cpu).toFixed(3)),
      peakRssKb: hwm,
      rowsOut: last.rows,
      sumN: last.sumN,
      devices: last.devices,
      proof,
      command: `${bin} run ${ruleOf(w)} --input ${file} --replay --on-eof flush${extra ? ` -o ${extra}` : ""}`,
    };
    results.push(row);
    console.log(
      `${w} ${fmt(records).padStart(9)} records: ${fmt(row.recordsPerSecWall).padStart(9)} rec/s wall (${fmt(wall)} ms), ` +
        `${fmt(row.recordsPerSecCpu)} rec/s CPU; floor ${fmt(row.floorRecordsPerSec)} rec/s (ratio ${row.floorRatio}), ` +
        `floor CPU ${fmt(row.floorRecordsPerSecCpu)} rec/s (CPU ratio ${row.floorRatioCpu}); ` +
        `peak RSS ${fmt(hwm / 1024)} MiB; out ${fmt(last.rows)} rows, Σn ${fmt(last.sumN)}, ` +
        `${last.devices} devices ${proof ? "ok" : "MISMATCH"}`,
    );
  }
  if (SIZES.length === 2) {
    const [small, big] = results.slice(-2) as { peakRssKb: number }[];
    console.log(`${w} peak RSS 1M / 100k: ${((big!.peakRssKb / small!.peakRssKb - 1) * 100).toFixed(1)} %`);
  }
}
if (noSave) process.exit(0);
const dir = join(ROOT, "bench/results");
if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
const suffix =
  (extra ? `-${extra.replace(/[^A-Za-z0-9]+/g, "_")}` : "") + (ruleOverride ? `-${ruleOverride.replace(/^.*\//, "").replace(/\.sql$/, "")}` : "");
const out = join(dir, `${new Date().toISOString().slice(0, 10)}-replay${suffix}${ARCH_SUFFIX}.json`);
// Runs of other workloads the same day stay in the file; this run's replace theirs.
type Result = { workload: string; records: number };
const previous = existsSync(out) ? ((JSON.parse(readFileSync(out, "utf8")) as { results?: Result[] }).results ?? []) : [];
const mine = results as Result[];
const merged = [...previous.filter((p) => !mine.some((r) => r.workload === p.workload && r.records === p.records)), ...mine];
await Bun.write(out, JSON.stringify({ machine: { arch: process.arch, cpus: navigator.hardwareConcurrency, bun: Bun.version }, results: merged }, null, 2) + "\n");
console.log(`wrote ${out}`);
