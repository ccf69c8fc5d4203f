/**
 * Rule density: the Rust rewrite's set-up. `floe serve` pinned to one core; one shared
 * httppush stream; N rules `SELECT * FROM s WHERE temp > 21.0` with a nop sink (or, with --varied,
 * rules of different thresholds, fields, operators, projections and a few windows over the same
 * stream); HTTP pushers at 500 msg/s on the other core. Reports the engine's CPU share (from
 * /proc), µs per rule evaluation (engine CPU ÷ messages × rules), idle RSS per rule and peak
 * anonymous memory under load, and checks every rule's decoder records_in against what was sent
 * and every filter's records_out against what its condition admits.
 *
 *   node_modules/.bin/bun bench/density.ts [--rules 100,1000,2000] [--seconds 15] [--rate 500]
 *                                          [--varied] [--bin dist/floe] [--settle 5] [--json]
 *                                          [--index on|off|both]   (both: each N without, then with the
 *                                                                   predicate index, FLOE_PREDICATE_INDEX)
 *                                          [--base PATH]           (first, each N with another build: paired)
 *                                          [--engine-env K=V]      (the engine's environment, repeatable)
 *                                          [--save]                (bench/results/<date>-density[-varied].json,
 *                                                                   a table of bench/RESULTS.md)
 *                                          [--profile DIR]         (this checkout's engine under bun --cpu-prof,
 *                                                                   a profile per run in DIR, with --cpu-prof-md)
 *
 * Loopback only; the pushers send a bounded number of messages (rate × seconds) and stop.
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { startFloe, tempHome, type DaemonProc } from "../test/server/daemon.ts";
import { freePort } from "../test/helpers/mosquitto.ts";
import { CPUS, cpuSeconds, load, memKb, MemSampler, mib, pinned, pinSelf } from "./meter.ts";

/** One message the pushers send: message k of the run. */
export interface Reading {
  readonly device: string;
  readonly temp: number;
  readonly hum: number;
}

/** Message k: temp 15.0 … 29.9 in steps of 0.1 (exact decimals), hum 0 … 96, ten devices. */
export function reading(k: number): Reading {
  return { device: `d${k % 10}`, temp: (150 + ((k * 7) % 150)) / 10, hum: (k * 13) % 97 };
}

/** A rule of the run and, for a filtering rule, which readings its WHERE admits. */
export interface DensityRule {
  readonly sql: string;
  /** The WHERE as a predicate over the sent readings; null for a rule without WHERE (a window). */
  readonly admits: ((r: Reading) => boolean) | null;
}

const OPS = [">", ">=", "<", "<=", "=", "!="] as const;
type Op = (typeof OPS)[number];
const cmp = (op: Op, a: number, b: number): boolean =>
  op === ">" ? a > b : op === ">=" ? a >= b : op === "<" ? a < b : op === "<=" ? a <= b : op === "=" ? a === b : a !== b;
const PROJECTIONS = ["*", "device, temp", "temp * 2 AS t2, device, hum"];

/** The plain set-up: every rule the same. */
export function sameRules(n: number): DensityRule[] {
  return Array.from({ length: n }, () => ({ sql: "SELECT * FROM s WHERE temp > 21.0", admits: (r: Reading) => r.temp > 21.0 }));
}

/**
 * The varied set-up: rule i compares temp (float thresholds) or hum (integer ones) with one of the
 * six operators, under one of three projections; one rule in 25 is a 1 s tumbling window and one
 * in 25 has a compound condition (evaluated by the rule alone).
 */
export function variedRules(n: number): DensityRule[] {
  const out: DensityRule[] = [];
  for (let i = 0; i < n; i++) {
    const proj = PROJECTIONS[i % PROJECTIONS.length]!;
    if (i % 25 === 24) {
      out.push({ sql: "SELECT device, count(*) AS n, max(temp) AS hi FROM s GROUP BY device, TUMBLINGWINDOW(ss, 1)", admits: null });
      continue;
    }
    if (i % 25 === 23) {
      const d = `d${i % 10}`;
      out.push({ sql: `SELECT ${proj} FROM s WHERE temp > 20.0 AND device = "${d}"`, admits: (r) => r.temp > 20.0 && r.device === d });
      continue;
    }
    const op = OPS[(i >> 1) % OPS.length]!;
    if (i % 2 === 0) {
      const c = (150 + ((i * 11) % 150)) / 10;
      out.push({ sql: `SELECT ${proj} FROM s WHERE temp ${op} ${c.toFixed(1)}`, admits: (r) => cmp(op, r.temp, c) });
    } else {
      const c = (i * 3) % 97;
      out.push({ sql: `SELECT ${proj} FROM s WHERE hum ${op} ${c}`, admits: (r) => cmp(op, r.hum, c) });
    }
  }
  return out;
}

export interface DensityOptions {
  readonly rules: readonly DensityRule[];
  readonly seconds: number;
  readonly rate: number;
  /** The engine's command (default: this checkout's cli.ts under bun), pinned by the harness. */
  readonly floe?: string[];
  /** Pin the engine to one CPU and the harness to the other (bench/meter.ts CPUS). */
  readonly pin?: boolean;
  /** Idle time before an RSS reading (the daemon's idle collection runs 3 s after the last request). */
  readonly settleMs: number;
  /** Concurrent pushers (each one request at a time). */
  readonly pushers?: number;
  /** The engine's extra environment (FLOE_PREDICATE_INDEX=off). */
  readonly env?: Record<string, string>;
}

export interface DensityResult {
  readonly rules: number;
  /** "base": the --base build (paired with this one). */
  readonly build?: string;
  /** The predicate index was on. */
  readonly index: boolean;
  readonly sent: number;
  readonly refused: number;
  /** How far behind the schedule the last message went out, ms. */
  readonly lateMs: number;
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
  readonly cpuPct: number;
  readonly usPerEval: number;
  readonly bareRssKb: number;
  readonly idleRssKb: number;
  readonly idleAnonKb: number;
  readonly idleKbPerRule: number;
  readonly peakRssKb: number;
  readonly peakAnonKb: number;
  /** Rules whose decoder records_in ≠ sent, or whose filter records_out ≠ what its WHERE admits. */
  readonly wrong: string[];
  readonly load: number[];
}

type Status = Record<string, number | string>;

async function must(d: DaemonProc, method: string, path: string, body: object | undefined, status: number): Promise<string> {
  const r = await d.call(method, path, body);
  if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.text;
}

function metricEnding(s: Status, suffix: string): number | undefined {
  for (const k in s) if (k.endsWith(suffix)) return Number(s[k]);
  return undefined;
}

/** What is wrong with one rule's counts ("" when exact). */
function checkRule(id: string, s: Status, sent: number, expectOut: number | null): string {
  const inDec = metricEnding(s, "_decoder_0_records_in_total");
  if (inDec !== sent) return `${id}: decoder records_in ${inDec} of ${sent}`;
  if (expectOut === null) return "";
  const out = metricEnding(s, "_filter_0_records_out_total");
  const fin = metricEnding(s, "_filter_0_records_in_total");
  if (fin !== sent || out !== expectOut) return `${id}: filter records_in ${fin} of ${sent}, records_out ${out} of ${expectOut}`;
  return "";
}

/** Sends `total` readings at `rate` from `pushers` concurrent loops; returns refusals and lateness. */
async function push(url: string, total: number, rate: number, pushers: number): Promise<{ refused: number; lateMs: number }> {
  let next = 0;
  let refused = 0;
  let lateMs = 0;
  const t0 = performance.now();
  const loop = async () => {
    for (;;) {
      const k = next++;
      if (k >= total) return;
      const due = t0 + (k * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      else lateMs = Math.max(lateMs, -wait);
      const r = await fetch(url, { method: "POST", body: JSON.stringify(reading(k)) });
      await r.text();
      if (r.status !== 200) refused++;
    }
  };
  await Promise.all(Array.from({ length: pushers }, loop));
  return { refused, lateMs: Math.round(lateMs) };
}

/** One density run: starts a daemon, creates the stream and the rules, pushes, measures, checks, stops. */
export async function runDensity(o: DensityOptions): Promise<DensityResult> {
  const pin = o.pin ?? true;
  if (pin) pinSelf(CPUS.load);
  const dataPort = await freePort();
  const cmd = [...(pin ? pinned(CPUS.engine) : []), ...(o.floe ?? [process.execPath, `${import.meta.dir}/../cli.ts`])];
  const d = await startFloe(tempHome(), { KUIPER__SOURCE__HTTPSERVERPORT: String(dataPort), KUIPER__SOURCE__HTTPSERVERIP: "127.0.0.1", ...o.env }, [], cmd);
  const pid = d.proc.pid;
  try {
    await must(d, "POST", "/streams", { sql: 'CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/density", FORMAT="json", SHARED="true")' }, 201);
    await Bun.sleep(o.settleMs);
    const bare = memKb(pid).rss;
    const ids = o.rules.map((_, i) => `r${i}`);
    for (let i = 0; i < ids.length; i++) await must(d, "POST", "/rules", { id: ids[i], sql: o.rules[i]!.sql, actions: [{ nop: {} }] }, 201);
    const all = JSON.parse(await must(d, "GET", "/rules/status/all", undefined, 200)) as Record<string, { status: string }>;
    const notRunning = ids.filter((id) => all[id]?.status !== "running");
    if (notRunning.length) throw new Error(`rules not running: ${notRunning.slice(0, 5).join(", ")}`);
    await Bun.sleep(o.settleMs);
    const idle = memKb(pid);

    const total = Math.round(o.rate * o.seconds);
    const mem = new MemSampler(pid);
    const cpu0 = cpuSeconds(pid);
    const w0 = performance.now();
    const { refused, lateMs } = await push(`http://127.0.0.1:${dataPort}/density`, total, o.rate, o.pushers ?? 8);
    // The engine is done when the last rule's decoder has counted every message (or it stopped moving).
    const last = ids[ids.length - 1]!;
    let seen = -1;
    for (let still = 0; still < 20; ) {
      const s = JSON.parse(await must(d, "GET", `/rules/${last}/status`, undefined, 200)) as Status;
      const n = metricEnding(s, "_decoder_0_records_in_total") ?? 0;
      if (n >= total) break;
      still = n === seen ? still + 1 : 0;
      seen = n;
      await Bun.sleep(50);
    }
    const cpu = cpuSeconds(pid) - cpu0;
    const wall = (performance.now() - w0) / 1000;
    mem.stop();

    const wrong: string[] = [];
    const sentReadings = Array.from({ length: total }, (_, k) => reading(k));
    const expectCache = new Map<DensityRule["admits"], number>();
    for (let i = 0; i < ids.length; i++) {
      const s = JSON.parse(await must(d, "GET", `/rules/${ids[i]}/status`, undefined, 200)) as Status;
      const admits = o.rules[i]!.admits;
      let expect: number | null = null;
      if (admits) {
        expect = expectCache.get(admits) ?? sentReadings.filter(admits).length;
        expectCache.set(admits, expect);
      }
      const w = checkRule(ids[i]!, s, total - refused, expect === null || refused > 0 ? null : expect);
      if (w) wrong.push(w);
    }
    const n = ids.length;
    return {
      rules: n,
      index: o.env?.FLOE_PREDICATE_INDEX !== "off",
      sent: total - refused,
      refused,
      lateMs,
      cpuSeconds: Math.round(cpu * 100) / 100,
      wallSeconds: Math.round(wall * 10) / 10,
      cpuPct: Math.round((cpu / wall) * 1000) / 10,
      usPerEval: Math.round(((cpu * 1e6) / (total * n)) * 1000) / 1000,
      bareRssKb: bare,
      idleRssKb: idle.rss,
      idleAnonKb: idle.anon,
      idleKbPerRule: Math.round(((idle.rss - bare) / n) * 10) / 10,
      peakRssKb: mem.peakRss,
      peakAnonKb: mem.peakAnon,
      wrong,
      load: load(),
    };
  } finally {
    await d.stop();
  }
}

export function densityTable(rows: readonly DensityResult[]): string {
  const lines = [
    "| rules | build / index | sent (refused, late ms) | CPU % of one core | µs per rule evaluation | idle RSS per rule (KiB) | idle RSS / anon (MiB) | peak RSS / anon (MiB) | counts |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.rules} | ${r.build ?? (r.index ? "on" : "off")} | ${r.sent} (${r.refused}, ${r.lateMs}) | ${r.cpuPct} | ${r.usPerEval} | ${r.idleKbPerRule} | ${mib(r.idleRssKb)} / ${mib(r.idleAnonKb)} | ${mib(r.peakRssKb)} / ${mib(r.peakAnonKb)} | ${r.wrong.length ? `${r.wrong.length} wrong` : "exact"} |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const { values: a } = parseArgs({
    options: {
      rules: { type: "string", default: "100,1000,2000" },
      seconds: { type: "string", default: "15" },
      rate: { type: "string", default: "500" },
      settle: { type: "string", default: "5" },
      pushers: { type: "string", default: "8" },
      bin: { type: "string" },
      varied: { type: "boolean" },
      json: { type: "boolean" },
      index: { type: "string", default: "on" },
      base: { type: "string" },
      "engine-env": { type: "string", multiple: true },
      save: { type: "boolean" },
      profile: { type: "string" },
    },
  });
  const engineEnv: Record<string, string> = {};
  for (const kv of a["engine-env"] ?? []) {
    const i = kv.indexOf("=");
    if (i <= 0) throw new Error(`--engine-env wants K=V, got ${kv}`);
    engineEnv[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const modes = a.index === "both" ? ["off", "on"] : [a.index!];
  if (modes.some((m) => m !== "on" && m !== "off")) throw new Error(`--index wants on, off or both, got ${a.index}`);
  if (a.base) modes.unshift("base");
  const rows: DensityResult[] = [];
  for (const n of a.rules!.split(",").map(Number)) for (const mode of modes) {
    const rules = a.varied ? variedRules(n) : sameRules(n);
    const r = await runDensity({
      env: { ...engineEnv, ...(mode === "off" ? { FLOE_PREDICATE_INDEX: "off" } : {}) },
      rules,
      seconds: Number(a.seconds),
      rate: Number(a.rate),
      settleMs: Number(a.settle) * 1000,
      pushers: Number(a.pushers),
      // The daemon runs in a directory of its own: paths are resolved here.
      floe: mode === "base" ? [resolve(a.base!)] : a.profile ? [process.execPath, "--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${resolve(a.profile)}`, `${import.meta.dir}/../cli.ts`] : a.bin ? [resolve(a.bin)] : undefined,
    });
    rows.push(mode === "base" ? { ...r, build: "base" } : r);
    for (const w of r.wrong.slice(0, 5)) console.error(w);
    console.error(`${n} rules, index ${mode}: ${r.cpuPct} % CPU, ${r.usPerEval} µs per rule evaluation, load ${r.load.join(" ")}`);
  }
  console.log(a.json ? JSON.stringify(rows, null, 2) : densityTable(rows));
  if (a.save) {
    const date = new Date().toISOString().slice(0, 10);
    const path = join(import.meta.dir, "results", `${date}-density${a.varied ? "-varied" : ""}.json`);
    const command = `node_modules/.bin/bun bench/density.ts ${process.argv.slice(2).join(" ")}`;
    await Bun.write(path, JSON.stringify({ date, command, varied: !!a.varied, seconds: Number(a.seconds), rate: Number(a.rate), rows }, null, 2) + "\n");
    console.error(`saved ${path}`);
  }
}
