/**
 * Micro-benchmark of the regular-expression functions on W3's text (ESPHome topics, ~45
 * characters): ns per call for each pattern through the same code the SQL functions call, on
 * re2js alone and with the JS RegExp twin where the pattern has one (lib/functions/regex/).
 *   node_modules/.bin/bun bench/regex.ts [--calls N]
 * Writes bench/results/<date>-regex.json.
 */
import { existsSync, mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { RowError } from "../lib/errors.ts";
import {
  compileGoRegex,
  goFindString,
  goMatchString,
  goReplaceAllString,
  type GoRegex,
} from "../lib/functions/regex/index.ts";
import { compileLikeSource } from "../lib/sql/like.ts";

const args = process.argv.slice(2);
const i = args.indexOf("--calls");
const CALLS = i >= 0 ? Number(args[i + 1]) : 500_000;
const topics = Array.from({ length: 1000 }, (_, d) => `bench/esphome/dev_${d}/sensor/temperature/state`);

type Fn = (re: GoRegex, s: string) => unknown;
const matches: Fn = (re, s) => goMatchString(re, s);
const substr: Fn = (re, s) => goFindString(re, s);
const replace = (t: string): Fn => (re, s) => goReplaceAllString(re, s, t);

const CASES: Array<[string, string, Fn]> = [
  ["regexp_matches", "^bench/esphome/[^/]+/sensor/[a-z]+/state$", matches],
  ["regexp_matches", "temperature", matches],
  ["regexp_matches", "(?i)SENSOR", matches],
  ["regexp_substr", "dev_[0-9]+", substr],
  ["regexp_substr", "dev_(\\d+)/sensor", substr],
  ["regexp_replace", "^bench/esphome/([^/]+)/sensor/(\\w+)/state$", replace("${2}@$1")],
  ["regexp_replace", "[0-9]", replace("#")],
  ["LIKE", compileLikeSource("bench/%"), matches],
  ["LIKE", compileLikeSource("bench/%/state"), matches],
];

function nsPerCall(re: GoRegex, f: Fn): number {
  let sink = 0;
  for (let k = 0; k < 20_000; k++) if (f(re, topics[k % 1000]!)) sink++;
  const t0 = performance.now();
  for (let k = 0; k < CALLS; k++) if (f(re, topics[k % 1000]!)) sink++;
  const ns = ((performance.now() - t0) * 1e6) / CALLS;
  if (sink < 0) console.log(sink);
  return ns;
}

function compiled(p: string, twin: boolean): GoRegex {
  const r = compileGoRegex(p, twin);
  if (r instanceof RowError) throw new Error(r.message);
  return r;
}

const results = [];
console.log(`${"function".padEnd(15)} ${"pattern".padEnd(48)} ${"re2js".padStart(8)} ${"twin".padStart(8)}  (ns/call, ${CALLS.toLocaleString("en-US")} calls)`);
for (const [fn, pattern, f] of CASES) {
  const alone = nsPerCall(compiled(pattern, false), f);
  const withTwin = compiled(pattern, true);
  const twin = withTwin.js ? nsPerCall(withTwin, f) : null;
  results.push({ fn, pattern, re2jsNs: Math.round(alone), twinNs: twin === null ? null : Math.round(twin) });
  console.log(`${fn.padEnd(15)} ${pattern.padEnd(48)} ${alone.toFixed(0).padStart(8)} ${(twin === null ? "-" : twin.toFixed(0)).padStart(8)}`);
}
const dir = join(import.meta.dir, "results");
if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
const out = join(dir, `${new Date().toISOString().slice(0, 10)}-regex.json`);
const load = loadavg().map((x) => Math.round(x * 100) / 100);
await Bun.write(out, JSON.stringify({ machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, load }, calls: CALLS, results }, null, 2) + "\n");
console.log(`wrote ${out} (load ${load.join(" ")})`);
