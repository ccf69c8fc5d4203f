/**
 * Micro-benchmark of the Go math ports (lib/functions/math-go*.ts) against the JS `Math` builtins
 * they replace: CPU ns per call on 1,000 sensor-like arguments (0..100 with fractions, as the eKuiper
 * test data), each pair measured alternately seven times, the fastest kept
 * (the least disturbed by other load on the machine).
 *   node_modules/.bin/bun bench/float-math.ts [--calls N]
 * Writes bench/results/<date>-float-math.json.
 */
import { existsSync, mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { goAtan, goAsin } from "../lib/functions/math-go-atan.ts";
import { goExp, goLog, goLog10, goSinh } from "../lib/functions/math-go-exp.ts";
import { goCos, goSin, goTan } from "../lib/functions/math-go-trig.ts";
import { goPow } from "../lib/functions/math-go.ts";

const args = process.argv.slice(2);
const i = args.indexOf("--calls");
const CALLS = i >= 0 ? Number(args[i + 1]) : 2_000_000;
const xs = Array.from({ length: 1000 }, (_, k) => ((k * 7919) % 10000) / 100 + 0.01);
const unit = xs.map((x) => x / 101);

type F = (x: number) => number;
const CASES: Array<[string, F, F, number[]]> = [
  ["sin", goSin, Math.sin, xs],
  ["cos", goCos, Math.cos, xs],
  ["tan", goTan, Math.tan, xs],
  ["asin", goAsin, Math.asin, unit],
  ["atan", goAtan, Math.atan, xs],
  ["exp", goExp, Math.exp, unit],
  ["ln", goLog, Math.log, xs],
  ["log10", goLog10, Math.log10, xs],
  ["sinh", goSinh, Math.sinh, unit],
  ["power(x, 1.5)", (x) => goPow(x, 1.5), (x) => Math.pow(x, 1.5), xs],
];

function nsPerCall(f: F, input: number[]): number {
  let sink = 0;
  for (let k = 0; k < 50_000; k++) sink += f(input[k % 1000]!);
  const c0 = process.cpuUsage();
  for (let k = 0; k < CALLS; k++) sink += f(input[k % 1000]!);
  const c = process.cpuUsage(c0);
  const ns = ((c.user + c.system) * 1e3) / CALLS;
  if (sink === 0.5) console.log(sink);
  return ns;
}

const results = [];
console.log(`${"function".padEnd(14)} ${"Go port".padStart(8)} ${"JS Math".padStart(8)} ${"ratio".padStart(6)}  (CPU ns/call, ${CALLS.toLocaleString("en-US")} calls)`);
for (const [name, go, js, input] of CASES) {
  const g: number[] = [];
  const j: number[] = [];
  for (let r = 0; r < 7; r++) {
    g.push(nsPerCall(go, input));
    j.push(nsPerCall(js, input));
  }
  const goNs = Math.min(...g);
  const jsNs = Math.min(...j);
  results.push({ fn: name, goNs: Math.round(goNs * 10) / 10, jsNs: Math.round(jsNs * 10) / 10, ratio: Math.round((goNs / jsNs) * 100) / 100 });
  console.log(`${name.padEnd(14)} ${goNs.toFixed(1).padStart(8)} ${jsNs.toFixed(1).padStart(8)} ${(goNs / jsNs).toFixed(2).padStart(6)}`);
}
const dir = join(import.meta.dir, "results");
if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
const out = join(dir, `${new Date().toISOString().slice(0, 10)}-float-math.json`);
const load = loadavg().map((x) => Math.round(x * 100) / 100);
await Bun.write(out, JSON.stringify({ machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, load }, calls: CALLS, results }, null, 2) + "\n");
console.log(`wrote ${out} (load ${load.join(" ")})`);
