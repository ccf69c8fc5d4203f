/**
 * Pipe-mode throughput of W1: `dist/floe run bench/rules/w1.sql` over 1,000,000 NDJSON
 * records, against the floor of reading and JSON.parse-ing the same file in the same runtime.
 *   node_modules/.bin/bun bench/pipe-w1.ts [records]
 */
import { existsSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { DEFAULT_FLOE_BIN } from "./arch.ts";
import { writeTelemetry } from "./ndjson.ts";

const ROOT = join(import.meta.dir, "..");
const N = Number(process.argv[2] ?? 1_000_000);
const dataDir = join(ROOT, "bench/data");
const file = join(dataDir, `w1-${N}.ndjson`);
if (!existsSync(dataDir)) mkdirSync(dataDir, { recursive: true });
if (!existsSync(file)) await writeTelemetry(file, N);
const bin = DEFAULT_FLOE_BIN;
if (!existsSync(bin)) throw new Error(`${relative(ROOT, bin)} is missing: run \`make build\` first`);

async function floor(): Promise<number> {
  const t0 = performance.now();
  const decoder = new TextDecoder();
  let rest = "";
  let n = 0;
  for await (const chunk of Bun.file(file).stream()) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = lines.pop()!;
    for (const l of lines) if (JSON.parse(l)) n++;
  }
  if (n !== N) throw new Error(`floor read ${n} records`);
  return performance.now() - t0;
}

function engine(): { ms: number; out: number } {
  const t0 = performance.now();
  const p = Bun.spawnSync([bin, "run", join(ROOT, "bench/rules/w1.sql"), "--input", file], { stdout: "pipe" });
  const ms = performance.now() - t0;
  if (p.exitCode !== 0) throw new Error(p.stderr.toString());
  let out = 0;
  for (const b of p.stdout) if (b === 10) out++;
  return { ms, out };
}

const runs = 3;
const floors: number[] = [];
const engines: number[] = [];
let rows = 0;
for (let i = 0; i < runs; i++) {
  floors.push(await floor());
  const e = engine();
  engines.push(e.ms);
  rows = e.out;
}
const med = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f = med(floors);
const e = med(engines);
const expected = Math.floor(N / 150) * 139 + Math.max(0, (N % 150) - 11);
console.log(`W1 pipe mode, ${N} records (${rows} rows out of ${expected} expected), median of ${runs}:`);
console.log(`  floor  (read + JSON.parse): ${(N / (f / 1000)).toFixed(0)} records/s  (${f.toFixed(0)} ms)`);
console.log(`  engine (${relative(ROOT, bin)} run):     ${(N / (e / 1000)).toFixed(0)} records/s  (${e.toFixed(0)} ms, incl. process start)`);
console.log(`  ratio engine/floor: ${(f / e).toFixed(2)}`);
