/**
 * Start-up and resident memory of the compiled executable ("Start-up" and the file-backed
 * pages of the executable). For each binary, in turn (A B A B … so a drift of the machine hits both):
 *   - `BIN --version`: wall time from spawn to exit, and its CPU time (user + system);
 *   - `BIN run rules/demo.sql --input fixtures/demo.jsonl` (the README's first command): wall time from
 *     spawn to the first output row on stdout, to exit, and CPU time;
 *   - memory of pipe mode: `BIN run rules/demo.sql` reading the demo fixture from a pipe that stays open,
 *     sampled from /proc/<pid>/status once the rows are out (VmRSS = RssAnon + RssFile + RssShmem);
 *   - memory of the idle daemon: `BIN serve` on free ports with empty etc/ and data/, sampled after it
 *     has served for `--settle` ms.
 * Prints medians (and min) per binary and, given `--base`, the ratio current / base paired run by run.
 * `--bin` defaults to this machine's build (dist/floe, or dist/floe-linux-arm64 on arm64).
 *
 *   make build && node_modules/.bin/bun bench/startup.ts [--bin dist/floe] [--base OTHER_BIN] [-n 20] [--mem-runs 3] [--settle 3000] [--json FILE]
 */
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DEFAULT_FLOE_BIN } from "./arch.ts";

const ROOT = join(import.meta.dir, "..");
const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1]! : def;
};
const bin = resolve(opt("--bin", DEFAULT_FLOE_BIN));
const baseOpt = opt("--base", "");
const base = baseOpt ? resolve(baseOpt) : "";
const runs = Number(opt("-n", "20"));
const memRuns = Number(opt("--mem-runs", "3"));
const settleMs = Number(opt("--settle", "3000"));
const jsonOut = opt("--json", "");
if (args.length) throw new Error(`unknown arguments: ${args.join(" ")}`);
for (const b of [bin, base]) if (b && !existsSync(b)) throw new Error(`${b} is missing: run \`make build\` first`);

const RULE = join(ROOT, "rules/demo.sql");
const FIXTURE = join(ROOT, "fixtures/demo.jsonl");

interface Timed {
  /** Spawn to the first byte on stdout (ms). */
  firstMs: number;
  /** Spawn to exit (ms). */
  exitMs: number;
  /** User + system CPU of the child (ms). */
  cpuMs: number;
}

interface Mem {
  rssKb: number;
  anonKb: number;
  fileKb: number;
  hwmKb: number;
}

/** Runs `cmd` to its end, timing the first stdout byte and the exit. */
async function timed(cmd: string[]): Promise<Timed> {
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
  let firstMs = NaN;
  for await (const chunk of proc.stdout) {
    if (Number.isNaN(firstMs) && chunk.length > 0) firstMs = performance.now() - t0;
  }
  const code = await proc.exited;
  const exitMs = performance.now() - t0;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}`);
  const cpu = proc.resourceUsage()?.cpuTime;
  return { firstMs, exitMs, cpuMs: cpu ? Number(cpu.user + cpu.system) / 1000 : NaN };
}

function memOf(pid: number): Mem {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? NaN);
  return { rssKb: kb("VmRSS"), anonKb: kb("RssAnon"), fileKb: kb("RssFile"), hwmKb: kb("VmHWM") };
}

/** Pipe mode holding its input open: memory once the demo's rows have come out. */
async function pipeMem(b: string): Promise<Mem> {
  const want = (await Bun.$`${b} run ${RULE} --input ${FIXTURE}`.cwd(ROOT).quiet().text()).split("\n").filter(Boolean).length;
  const proc = Bun.spawn([b, "run", RULE], { cwd: ROOT, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  proc.stdin.write(readFileSync(FIXTURE));
  proc.stdin.flush();
  const reader = proc.stdout.getReader();
  let out = "";
  const deadline = Date.now() + 10_000;
  while (out.split("\n").filter(Boolean).length < want) {
    if (Date.now() > deadline) throw new Error(`${b} run: ${want} rows expected, got: ${out}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`${b} run ended early: ${out}`);
    out += new TextDecoder().decode(value);
  }
  await Bun.sleep(200);
  const m = memOf(proc.pid);
  proc.stdin.end();
  reader.releaseLock();
  await proc.exited;
  return m;
}

/** The daemon with nothing defined, after it has served for `settleMs`. */
async function daemonMem(b: string): Promise<Mem> {
  const dir = mkdtempSync(join(tmpdir(), "floe-startup-"));
  mkdirSync(join(dir, "etc"));
  mkdirSync(join(dir, "data"));
  const proc = Bun.spawn([b, "serve", "--etc", join(dir, "etc"), "--data", join(dir, "data")], {
    cwd: dir,
    env: { ...process.env, KUIPER__BASIC__RESTPORT: "0", KUIPER__BASIC__PORT: "0", KUIPER__SOURCE__HTTPSERVERPORT: "0" },
    stdout: "pipe",
    stderr: "ignore",
  });
  try {
    const reader = proc.stdout.getReader();
    let out = "";
    const deadline = Date.now() + 15_000;
    let m: RegExpExecArray | null = null;
    while (!(m = /restful api on https?:\/\/[^:]+:(\d+)\./.exec(out))) {
      if (Date.now() > deadline) throw new Error(`${b} serve did not start: ${out}`);
      const { value, done } = await reader.read();
      if (done) throw new Error(`${b} serve exited: ${out}`);
      out += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    const ping = await fetch(`http://127.0.0.1:${m[1]}/ping`);
    if (ping.status !== 200) throw new Error(`${b} serve: GET /ping answered ${ping.status}`);
    await Bun.sleep(settleMs);
    return memOf(proc.pid);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN;
};
const min = (xs: number[]) => Math.min(...xs);

const bins = base ? { current: bin, base } : { current: bin };
type Name = keyof typeof bins;
const names = Object.keys(bins) as Name[];
const version: Record<string, Timed[]> = {};
const demo: Record<string, Timed[]> = {};
const pipe: Record<string, Mem[]> = {};
const daemon: Record<string, Mem[]> = {};
for (const n of names) [version[n], demo[n], pipe[n], daemon[n]] = [[], [], [], []];

const load0 = loadavg()[0]!;
// One warm-up of each so the page cache holds both executables.
for (const n of names) await timed([bins[n]!, "--version"]);
for (let i = 0; i < runs; i++) {
  for (const n of names) version[n]!.push(await timed([bins[n]!, "--version"]));
  for (const n of names) demo[n]!.push(await timed([bins[n]!, "run", RULE, "--input", FIXTURE]));
}
for (let i = 0; i < memRuns; i++) {
  for (const n of names) pipe[n]!.push(await pipeMem(bins[n]!));
  for (const n of names) daemon[n]!.push(await daemonMem(bins[n]!));
}
const load1 = loadavg()[0]!;

const ms = (x: number) => x.toFixed(1).padStart(7);
const mib = (kb: number) => (kb / 1024).toFixed(1).padStart(7);
const ratio = (pick: (i: number, n: Name) => number) => {
  if (!base) return "";
  const r: number[] = [];
  for (let i = 0; i < runs; i++) r.push(pick(i, "current") / pick(i, "base"));
  return ` ${median(r).toFixed(2).padStart(6)}`;
};
const lines: string[] = [];
lines.push(`load average ${load0.toFixed(1)} → ${load1.toFixed(1)}; ${runs} timed runs and ${memRuns} memory samples per binary${base ? ", paired" : ""}`);
for (const n of names) lines.push(`${n.padEnd(8)} ${bins[n]} (${(Bun.file(bins[n]!).size / 1048576).toFixed(1)} MiB)`);
lines.push("");
lines.push(`${"figure (ms; median, min)".padEnd(34)}${names.map((n) => `${n.padStart(8)} median     min`).join("  ")}${base ? "  current/base" : ""}`);
const row = (label: string, data: Record<string, Timed[]>, key: keyof Timed) =>
  lines.push(`${label.padEnd(34)}${names.map((n) => `${ms(median(data[n]!.map((t) => t[key])))}  ${ms(min(data[n]!.map((t) => t[key])))}`).join("    ")}${ratio((i, n) => data[n]![i]![key])}`);
row("--version: wall", version, "exitMs");
row("--version: cpu", version, "cpuMs");
row("run rules/demo.sql: first row", demo, "firstMs");
row("run rules/demo.sql: exit", demo, "exitMs");
row("run rules/demo.sql: cpu", demo, "cpuMs");
lines.push("");
lines.push(`${"memory (MiB; median)".padEnd(34)}${names.map((n) => `${n.padStart(8)}   rss    anon    file    peak`).join("  ")}`);
const memRow = (label: string, data: Record<string, Mem[]>) =>
  lines.push(`${label.padEnd(34)}${names.map((n) => `        ${mib(median(data[n]!.map((m) => m.rssKb)))} ${mib(median(data[n]!.map((m) => m.anonKb)))} ${mib(median(data[n]!.map((m) => m.fileKb)))} ${mib(median(data[n]!.map((m) => m.hwmKb)))}`).join("  ")}`);
memRow("pipe mode (run, input open)", pipe);
memRow(`daemon idle (serve, +${settleMs} ms)`, daemon);
console.log(lines.join("\n"));
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ bins, runs, memRuns, settleMs, load: [load0, load1], version, demo, pipe, daemon }, null, 2));
