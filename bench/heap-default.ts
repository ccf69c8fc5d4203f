/**
 * floe's default heap: `floe run` as a user starts it (no BUN_JSC_* variable, so floe
 * starts itself again with BUN_JSC_forceRAMSize, cli.ts) against `FLOE_JSC_RAM=system` (the
 * runtime's own sizing), alternated in pairs over one replay file. Peak VmRSS, RssAnon and RssFile
 * sampled every 20 ms from /proc/<pid>/status; CPU from the child's resource usage.
 *
 *   node_modules/.bin/bun bench/heap-default.ts [w1] [--records 100000] [--pairs 3] [--bin dist/floe]
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_FLOE_BIN } from "./arch.ts";
import { load, mib } from "./meter.ts";

const ROOT = join(import.meta.dir, "..");
const { values: a, positionals } = parseArgs({
  allowPositionals: true,
  options: { records: { type: "string", default: "100000" }, pairs: { type: "string", default: "3" }, bin: { type: "string" } },
});
const w = positionals[0] ?? "w1";
const records = Number(a.records);
const bin = a.bin ? resolve(a.bin) : DEFAULT_FLOE_BIN;
const input = join(ROOT, `bench/data/replay-${w}-${records}-10000.ndjson`);
if (!existsSync(input)) Bun.spawnSync([process.execPath, join(ROOT, "bench/replay-gen.ts"), w, String(records), "10000"], { stdout: "inherit", stderr: "inherit" });
if (!existsSync(input)) throw new Error(`no replay file ${input} (bench/replay-gen.ts ${w} ${records} 10000)`);

interface Run {
  readonly rss: number;
  readonly anon: number;
  readonly file: number;
  readonly cpu: number;
}

async function once(env: Record<string, string>): Promise<Run> {
  const { BUN_JSC_forceRAMSize: _drop, ...base } = process.env;
  const p = Bun.spawn([bin, "run", join(ROOT, `bench/rules/${w}.sql`), "--input", input, "--replay", "--on-eof", "flush"], {
    env: { ...base, ...env },
    stdout: "ignore",
    stderr: "inherit",
  });
  let rss = 0;
  let anon = 0;
  let file = 0;
  const timer = setInterval(() => {
    try {
      const s = readFileSync(`/proc/${p.pid}/status`, "utf8");
      const get = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(s)?.[1] ?? 0);
      rss = Math.max(rss, get("VmRSS"));
      anon = Math.max(anon, get("RssAnon"));
      file = Math.max(file, get("RssFile"));
    } catch {
      // exited between two samples
    }
  }, 20);
  const code = await p.exited;
  clearInterval(timer);
  if (code !== 0) throw new Error(`floe run exited ${code}`);
  const u = p.resourceUsage()!;
  return { rss, anon, file, cpu: Number(u.cpuTime.user + u.cpuTime.system) / 1e6 };
}

const modes: [string, Record<string, string>][] = [
  ["default (small heap)", {}],
  ["FLOE_JSC_RAM=system", { FLOE_JSC_RAM: "system" }],
];
const out: Record<string, Run[]> = {};
for (let i = 0; i < Number(a.pairs); i++) for (const [name, env] of modes) (out[name] ??= []).push(await once(env));
const med = (xs: number[]) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
console.log(`${w}, ${records} records replayed, ${a.pairs} alternated pairs, load ${load().join(" ")}; medians (each run)`);
console.log("| start | peak RSS MiB | peak anon MiB | peak file-backed MiB | CPU s |");
console.log("|---|---|---|---|---|");
for (const [name] of modes) {
  const r = out[name]!;
  const col = (f: (x: Run) => number, fmt: (x: number) => string) => `${fmt(med(r.map(f)))} (${r.map((x) => fmt(f(x))).join(", ")})`;
  console.log(`| ${name} | ${col((x) => x.rss, (v) => String(mib(v)))} | ${col((x) => x.anon, (v) => String(mib(v)))} | ${col((x) => x.file, (v) => String(mib(v)))} | ${col((x) => x.cpu, (v) => v.toFixed(2))} |`);
}
