/**
 * Regenerates bench/RESULTS.md from the newest bench/results/<date>-<name>.json of each kind:
 * per workload (floe and Node-RED) the ladder and the repeated top step, the generator's ceiling,
 * replay throughput, memory flatness, and bench/notes.md (hand-written observations) at the end.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { densityTable, type DensityResult } from "./density.ts";
import { join } from "node:path";
import { latencyText, type StepResult } from "./step.ts";
import { LADDER_IDS, WORKLOADS, type WorkloadId } from "./workloads.ts";

interface Stat {
  median: number;
  min: number;
  max: number;
}
interface Top {
  rate: number;
  seconds: number;
  passed: number;
  of: number;
  us_per_msg: Stat;
  cpu_pct: Stat;
  peak_rss_mib: Stat;
  peak_anon_mib: Stat;
  gap: Stat;
  runs: StepResult[];
}
interface WorkloadFile {
  date: string;
  machine: { arch?: string; cpus: number; bun: string; node: string };
  workload: string;
  title: string;
  engine: string;
  method: { step_seconds: number; top_seconds: number; reps: number; conns: number };
  ladder: StepResult[];
  top?: Top | null;
  /** Every repeated step tried, the failed one above `top` included. */
  top_attempts?: Top[];
  failed_at?: { rate: number; why: string[]; on_schedule: boolean } | null;
}

/** The newest file per name (`2026-11-29-w1.json` → name `w1`). */
function newest(dir: string): Map<string, { path: string; date: string }> {
  const out = new Map<string, { path: string; date: string }>();
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir).sort()) {
    const m = /^(\d{4}-\d{2}-\d{2})-(.+)\.json$/.exec(f);
    if (m) out.set(m[2]!, { path: join(dir, f), date: m[1]! });
  }
  return out;
}

function load<T>(files: Map<string, { path: string }>, name: string): T | undefined {
  const f = files.get(name);
  return f ? (JSON.parse(readFileSync(f.path, "utf8")) as T) : undefined;
}

const k = (n: number) => (n >= 1000 ? `${n / 1000}k` : String(n));
const range = (s: Stat, unit = "") => `${s.median}${unit} (${s.min}–${s.max})`;

function stepRow(r: StepResult, label: string): string {
  return `| ${label} | ${k(r.rate)} | ${r.seconds} s | ${r.on_schedule ? "yes" : "**no**"} | ${r.gap}${r.gap_read_ms > 250 ? ` (read ${r.gap_read_ms} ms late)` : ""} | ${r.drain_s ?? "—"} | ${r.lost} | ${r.duplicates} | ${r.cpu_pct} | ${r.us_per_msg} | ${r.peak_rss_mib} | ${r.peak_anon_mib} | ${lagCell(r)} | ${r.load_before[0]} | ${r.pass ? "pass" : `**fail**: ${r.why.join("; ").replace(/\|/g, "/")}`} | \`${r.command}\` |`;
}

/** Event-loop lag during the send, as bucket bounds (bench/lag.ts); steps measured before the probe show —. */
function lagCell(r: StepResult): string {
  const l = r.lag;
  if (!l) return "—";
  const b = (x: number) => (x === Infinity || x === null ? "> 5 s" : `≤ ${x}`);
  return `${b(l.p999_ms)} / ${b(l.max_ms)}${l.within_budget ? "" : " **over**"}`;
}

const HEAD =
  "| step | rate | length | on_schedule | gap | drain s | lost | dup | CPU % | µs/msg | peak RSS MiB | peak anon MiB | lag p99.9 / max ms | load | verdict | reproduce |\n" +
  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

function figure(f: WorkloadFile): string {
  const t = f.top;
  if (!t) return f.ladder.length && !f.ladder[0]!.pass ? "none (the first step failed)" : "—";
  const exact = t.passed === t.of ? `${k(t.rate)} msg/s` : `${k(t.rate)} msg/s (${t.passed}/${t.of} repetitions passed)`;
  return exact;
}

/** ` on arm64 (4 cores)` for a file from another architecture than x64 (bench/run.ts saves it as `…-arm64.json`). */
function archNote(f: WorkloadFile): string {
  const arch = f.machine?.arch;
  return arch && arch !== "x64" ? ` on ${arch} (${f.machine.cpus} cores)` : "";
}

function workloadSection(f: WorkloadFile): string {
  const name = f.engine === "floe" ? "floe" : f.engine === "floor" ? "floor (hand-written, bench/floor.ts)" : "Node-RED";
  const lines = [`### ${name}${archNote(f)} — ${f.title}`, ""];
  lines.push(`Highest exact step: **${figure(f)}**.`);
  for (const t of f.top_attempts ?? []) if (t.rate !== f.top?.rate && t.passed < t.of) lines.push(`Repeated at ${k(t.rate)} msg/s first: ${t.passed}/${t.of} repetitions passed, so the step below was repeated.`);
  if (f.failed_at) lines.push(`The ladder stopped at ${k(f.failed_at.rate)} msg/s: ${f.failed_at.why.join("; ")}${f.failed_at.on_schedule ? "" : " (the generator was not on schedule: a generator limit, not the engine's)"}.`);
  if (f.top) {
    const t = f.top;
    lines.push(
      `Top step ${k(t.rate)} msg/s, ${t.of} × ${t.seconds} s, median (range): ${range(t.us_per_msg, " µs/msg")}, CPU ${range(t.cpu_pct, " %")}, peak RSS ${range(t.peak_rss_mib, " MiB")}, peak anon ${range(t.peak_anon_mib, " MiB")}, gap ${range(t.gap)}.`,
    );
  }
  lines.push("", HEAD);
  for (const r of f.ladder) lines.push(stepRow(r, "ladder"));
  for (const t of f.top_attempts ?? (f.top ? [f.top] : [])) t.runs.forEach((r, i) => lines.push(stepRow(r, `repeat ${i + 1}/${t.of}`)));
  lines.push("");
  return lines.join("\n");
}

export async function writeReport(root: string): Promise<string> {
  const dir = join(root, "bench/results");
  const files = newest(dir);
  const out: string[] = [
    "# floe benchmark results",
    "",
    "Generated by `bench/report.ts` from `bench/results/*.json` (the newest file of each kind); the method and the pass",
    "criteria are `../shared/spec/bench.md`. Regenerate with `make bench` (everything) or `node_modules/.bin/bun bench/run.ts --report`.",
    "",
    "Set-up of every MQTT step: a fresh bounded Mosquitto (`max_queued_messages 4096`, `max_queued_bytes 1048576`,",
    "`persistence false`, `max_inflight_messages 0`) and the generator (8 connections, QoS 0, open loop) on CPU 0; the",
    "engine alone on CPU 1 (`taskset -c 1`). floe runs as the daemon (`dist/floe serve`), the stream and rule created",
    "over REST, a file sink (`fileType: lines`, `sendSingle: true`); its counters come from `GET /rules/bench/status`.",
    "A warm-up burst (own tag, devices `warm_*`) runs until the source counter shows it; steps measured from 2026-12-02",
    "then warm up for 10 s more at the step's own rate (`--warm-seconds`), so that JIT compilation is not charged to the",
    "measured send (before, a 20 s step still carried about 10 % of it; bench/notes.md). A step passes when the",
    "generator was on schedule, the end-of-send gap (sent − the rule's source `records_in_total` when sending stops) is",
    "≤ 4,096, the exact proof holds on the file output, and the engine's counters agree with it (source in = sent,",
    "sink out = rows written, no exceptions). CPU % is the engine's CPU during the send as a share of its core;",
    "µs/msg is its CPU from the first send to the last window flushed, per message. `drain s`: seconds from the end of",
    "the send until the output stopped growing (window steps wait 11 s for the last window on purpose; blank in rows",
    "measured before the harness recorded it). `load` is the 1-minute load",
    "average when the step started (the machine has 2 cores and is shared with other work).",
    "",
  ];
  const summary: string[] = [
    "## Summary",
    "",
    "| workload | engine | highest exact step | µs/msg at top (median) | CPU % at top | peak RSS MiB | peak anon MiB | ≤ 8 µs/msg | RSS ≤ 64 MB | floe / floor (paired step) |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  type PairRow = { workload: string; rate: number; ratio_us: number; floe: StepResult; floor: StepResult };
  const pairFile = load<{ pairs: PairRow[] }>(files, "floor-pairs");
  /**
   * floe / floor µs per message at a workload's newest rate: the pair's ratio, or the median (and range) of its
   * pairs; marked when a step of those pairs failed.
   */
  const pairCell = (id: string): string => {
    const all = pairFile?.pairs.filter((x) => x.workload === id) ?? [];
    if (!all.length) return "—";
    const rate = all[all.length - 1]!.rate;
    const ps = all.filter((x) => x.rate === rate);
    const rs = ps.map((x) => x.ratio_us).sort((x, y) => x - y);
    const mid = (rs[(rs.length - 1) >> 1]! + rs[rs.length >> 1]!) / 2;
    const ratio = rs.length === 1 ? `${rs[0]}` : `${Math.round(mid * 100) / 100} (median of ${rs.length} pairs, ${rs[0]}–${rs[rs.length - 1]})`;
    const failed = ps.some((x) => !x.floe.pass || !x.floor.pass);
    return `${ratio} at ${k(rate)}${failed ? " (steps failed: indicative)" : ""}`;
  };
  const sections: string[] = [];
  for (const id of LADDER_IDS) {
    for (const [engine, arch] of ["floe", "floor", "node-red"].flatMap((e) => [[e, ""] as const, [e, "-arm64"] as const])) {
      const f = load<WorkloadFile>(files, (engine === "floe" ? id : `${id}-${engine}`) + arch);
      if (!f) continue;
      const t = f.top;
      const rssMb = t ? (t.peak_rss_mib.max * 1048576) / 1e6 : NaN;
      summary.push(
        `| ${WORKLOADS[id].title} | ${engine}${archNote(f)} | ${figure(f)} | ${t ? t.us_per_msg.median : "—"} | ${t ? t.cpu_pct.median : "—"} | ${t ? t.peak_rss_mib.median : "—"} | ${t ? t.peak_anon_mib.median : "—"} | ${t ? (t.us_per_msg.median <= 8 ? "yes" : "**no**") : "—"} | ${t ? (rssMb <= 64 ? "yes" : `**no** (${rssMb.toFixed(0)} MB)`) : "—"} | ${engine === "floe" && !arch ? pairCell(id) : "—"} |`,
      );
      sections.push(workloadSection(f));
    }
  }
  out.push(...summary, "");
  const first = [...files.values()][0];
  if (first) {
    const f = JSON.parse(readFileSync(first.path, "utf8")) as { machine?: WorkloadFile["machine"] };
    if (f.machine) out.push(`Machine: ${f.machine.cpus} cores, Bun ${f.machine.bun}, Node.js ${f.machine.node ?? "?"} (for Node-RED).`, "");
  }
  type Ceiling = { date: string; rows: { rate: number; seconds: number; on_schedule: boolean; sent: number; received: number; lost: number; gap_at_end_of_send: number; clean: boolean; broker_us_per_msg: number; load: number[] }[] };
  // Every ceiling run is shown: it moves with the machine's load.
  const ceilings = readdirSync(dir)
    .filter((f) => f.endsWith("-gen-ceiling.json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as Ceiling);
  if (ceilings.length) {
    out.push(
      "## Generator ceiling",
      "",
      "Publisher (this harness's generator, CPU 0) → the bounded Mosquitto (CPU 0) → a minimal counting subscriber (a raw MQTT reader, CPU 1): `node_modules/.bin/bun bench/gen.ts --ceiling`.",
      "A step above the highest clean rate here cannot tell the engine's limit from the generator's.",
      "",
      "| run | rate | length | on_schedule | sent | received | lost | gap at end of send | clean | broker µs/msg | load |",
      "|---|---|---|---|---|---|---|---|---|---|---|",
    );
    for (const ceil of ceilings) for (const r of ceil.rows) out.push(`| ${ceil.date.slice(0, 16).replace("T", " ")} UTC | ${k(r.rate)} | ${r.seconds} s | ${r.on_schedule ? "yes" : "no"} | ${r.sent} | ${r.received} | ${r.lost} | ${r.gap_at_end_of_send} | ${r.clean ? "yes" : "**no**"} | ${r.broker_us_per_msg} | ${r.load[0]} |`);
    out.push("");
  }
  type Pair = { workload: string; rate: number; seconds: number; floe: StepResult; floor: StepResult; ratio_us: number; ratio_rss: number; ratio_anon: number };
  const pairs = load<{ date: string; pairs: Pair[] }>(files, "floor-pairs");
  if (pairs?.pairs.length) {
    out.push(
      "## floe against the floor (paired steps)",
      "",
      "The floor is each workload written by hand on floe's own lean MQTT reader (`bench/floor.ts`: `JSON.parse`, a `Map` per",
      "device, `JSON.stringify` per row, lines written once per tick; no SQL, no planner, no bus), measured with the same",
      "method and proof. floe and the floor run in turn at the same rate, so each ratio compares two neighbouring steps on",
      "the same machine; the issue's target is floe / floor ≤ 1.5 and ≤ 2.5 µs/msg for floe.",
      "",
      "| workload | rate | length | floe µs/msg | floor µs/msg | floe / floor | floe RSS / anon MiB | floor RSS / anon MiB | floe lag p99.9 / max ms | floor lag p99.9 / max ms | both pass | load | reproduce |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    );
    for (const p of pairs.pairs) {
      out.push(
        `| ${p.workload} | ${k(p.rate)} | ${p.seconds} s | ${p.floe.us_per_msg} | ${p.floor.us_per_msg} | **${p.ratio_us}** | ${p.floe.peak_rss_mib} / ${p.floe.peak_anon_mib} | ${p.floor.peak_rss_mib} / ${p.floor.peak_anon_mib} | ${lagCell(p.floe)} | ${lagCell(p.floor)} | ${p.floe.pass && p.floor.pass ? "yes" : `**no**: ${[...p.floe.why.map((w) => `floe: ${w}`), ...p.floor.why.map((w) => `floor: ${w}`)].join("; ").replace(/\|/g, "/")}`} | ${p.floe.load_before[0]} | \`${p.floe.command}\` |`,
      );
    }
    out.push("");
  }
  out.push(...latencySection(files), ...groupMemorySection(files));
  out.push("## Workloads", "", ...sections);
  const soaks = ["w2", "w4"].map((id) => load<{ workload: string; rate: number; seconds: number; rss_at_30s_kb: number; rss_at_end_kb: number; growth_pct: number; step: StepResult }>(files, `soak-${id}`)).filter((x) => x);
  out.push("## Memory flatness", "");
  out.push("Peak RSS at 20k vs at 100k msg/s (ladder steps of the same length; should not grow with rate):", "");
  out.push("| workload | peak RSS at 20k | at 100k | peak anon at 20k | at 100k |", "|---|---|---|---|---|");
  for (const id of ["w2", "w4"]) {
    const f = load<WorkloadFile>(files, id);
    const at = (r: number) => f?.ladder.find((s) => s.rate === r);
    const a = at(20_000);
    const b = at(100_000);
    out.push(`| ${id} | ${a?.peak_rss_mib ?? "—"} MiB | ${b?.peak_rss_mib ?? "—"} MiB | ${a?.peak_anon_mib ?? "—"} MiB | ${b?.peak_anon_mib ?? "—"} MiB |`);
  }
  out.push("");
  if (soaks.length) {
    // RSS is a GC sawtooth: compare the peaks of the first and the last 30 s of the send.
    out.push(
      "Over time (one 120 s step at 50k msg/s; `node_modules/.bin/bun bench/run.ts --soak w2 w4`): peak RSS (and anon) sampled in the first 30 s",
      "of the send vs in its last 30 s; the whole series (every 5 s) is in the JSON.",
      "",
      "| workload | rate | length | peak RSS 0–30 s | peak RSS last 30 s | change | peak anon 0–30 s | peak anon last 30 s | µs/msg | verdict |",
      "|---|---|---|---|---|---|---|---|---|---|",
    );
    for (const s of soaks) {
      const series = s!.step.rss_series;
      const peak = (from: number, to: number, i: 1 | 2) => Math.max(...series.filter(([t]) => t >= from && t <= to).map((x) => x[i]));
      const end = s!.seconds;
      const r0 = peak(0, 30, 1);
      const r1 = peak(end - 30, end, 1);
      out.push(
        `| ${s!.workload} | ${k(s!.rate)} | ${s!.seconds} s | ${(r0 / 1024).toFixed(1)} MiB | ${(r1 / 1024).toFixed(1)} MiB | ${(((r1 - r0) / r0) * 100).toFixed(1)} % | ${(peak(0, 30, 2) / 1024).toFixed(1)} MiB | ${(peak(end - 30, end, 2) / 1024).toFixed(1)} MiB | ${s!.step.us_per_msg} | ${s!.step.pass ? "pass" : "fail"} |`,
      );
    }
    out.push("");
  }
  const replay = load<{ results: { workload: string; records: number; recordsPerSecWall: number; recordsPerSecCpu: number; floorRecordsPerSec: number; floorRatio: number; floorRecordsPerSecCpu?: number; floorRatioCpu?: number; peakRssKb: number; proof: boolean; command: string; load?: number[] }[] }>(files, "replay");
  if (replay) {
    out.push(
      "## Replay throughput (no network)",
      "",
      "`floe run RULE --input FILE --replay` (compiled `dist/floe`) over generated NDJSON envelopes, median of 3, against the floor of reading and `JSON.parse`-ing the same file in Bun: `node_modules/.bin/bun bench/run.ts --replay`.",
      "",
      "`engine / floor (CPU)` compares CPU time (user + system) of the engine process with the floor loop's own: on a shared",
      "machine it is the ratio that holds (the targets: W1 ≥ 0.5, W2–W5 ≥ 0.35).",
      "",
      "| workload | records | records/s (wall) | records/s (CPU) | floor records/s (wall) | engine / floor (wall) | floor records/s (CPU) | engine / floor (CPU) | peak RSS MiB | proof | load after |",
      "|---|---|---|---|---|---|---|---|---|---|---|",
    );
    for (const r of replay.results.slice().sort((x, y) => x.workload.localeCompare(y.workload) || x.records - y.records)) {
      out.push(`| ${r.workload} | ${r.records.toLocaleString("en-US")} | ${r.recordsPerSecWall.toLocaleString("en-US")} | ${r.recordsPerSecCpu.toLocaleString("en-US")} | ${r.floorRecordsPerSec.toLocaleString("en-US")} | ${r.floorRatio} | ${r.floorRecordsPerSecCpu?.toLocaleString("en-US") ?? "—"} | ${r.floorRatioCpu ?? "—"} | ${(r.peakRssKb / 1024).toFixed(1)} | ${r.proof ? "ok" : "**mismatch**"} | ${r.load?.[0] ?? "—"} |`);
    }
    out.push("");
  }
  for (const name of ["density", "density-varied"]) {
    const d = load<{ date: string; command: string; varied: boolean; seconds: number; rate: number; rows: DensityResult[] }>(files, name);
    if (!d) continue;
    out.push(
      `## Rule density${d.varied ? ", varied rules" : ""}`,
      "",
      `One shared httppush stream at ${d.rate} msg/s for ${d.seconds} s into N rules with a nop sink, floe pinned to one core (bench/density.ts;`,
      d.varied
        ? "rules of different thresholds, fields, operators and projections, one in 25 a window, one in 25 a compound WHERE)."
        : "every rule `SELECT * FROM s WHERE temp > 21.0`, the Rust rewrite's set-up).",
      "µs per rule evaluation is the engine's CPU ÷ (messages × rules); `counts` checks every rule's decoder and filter counters;",
      "`base` is the `--base` build, `off` / `on` the measured build without / with the predicate index (FLOE_PREDICATE_INDEX), in turn.",
      `Measured ${d.date}, load average in the JSON: \`${d.command}\``,
      "",
      densityTable(d.rows),
      "",
    );
  }
  const notes = join(root, "bench/notes.md");
  if (existsSync(notes)) out.push(readFileSync(notes, "utf8").trim(), "");
  const path = join(root, "bench/RESULTS.md");
  await Bun.write(path, out.join("\n"));
  return path;
}

if (import.meta.main) console.log(`wrote ${await writeReport(join(import.meta.dir, ".."))}`);

/** Publish → sink latency per step (`bench/run.ts --latency`), floe against a plain subscriber in the same step. */
function latencySection(files: Map<string, { path: string }>): string[] {
  const rows: string[] = [];
  for (const id of LADDER_IDS) {
    const f = load<WorkloadFile>(files, `${id}-latency`);
    for (const r of f?.ladder ?? []) {
      const l = r.latency;
      if (!l) continue;
      const d = l.subscriber ? Math.round((l.floe.p99_ms - l.subscriber.p99_ms) * 100) / 100 : null;
      rows.push(`| ${id} | ${k(r.rate)} | ${r.seconds} s | ${latencyText(l)} | ${d === null ? "—" : `${d} ms${d <= 2 ? "" : " **over 2 ms**"}`} | ${r.pass ? "pass" : `**fail**: ${r.why.join("; ").replace(/\|/g, "/")}`} | ${r.load_before[0]} | \`${r.command}\` |`);
    }
  }
  if (!rows.length) return [];
  return [
    "## Publish → sink latency",
    "",
    "floe's rule sends each row through an MQTT sink to the same broker; a probe subscriber (`bench/latency-probe.ts`, on the",
    "load CPU with the broker and the generator) stamps each socket read (epoch ms with a fraction, one clock for both), for floe's rows and,",
    "in the same step, for the input itself (a plain subscriber: the floor). Latency = arrival − the generator's write of the",
    "message (a send-time table per connection, keyed by the id in the payload). Window workloads: window close (the 10 s",
    "boundary) → the row's arrival. Goal on W1 at 100k: floe's p99 ≤ the subscriber's p99 + 2 ms.",
    "",
    "| workload | rate | length | p50 / p99 / max | floe p99 − subscriber p99 | verdict | load | reproduce |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
  ];
}

/** Memory per open window group: anonymous growth over the send ÷ the groups a window holds (W2-1M's goal ≤ 200 bytes). */
function groupMemorySection(files: Map<string, { path: string }>): string[] {
  const rows: string[] = [];
  for (const id of ["w2", "w2-1m"] as WorkloadId[]) {
    const f = load<WorkloadFile>(files, id);
    for (const r of f?.ladder ?? []) {
      if (r.anon_start_mib === undefined) continue;
      const groups = Math.min(WORKLOADS[id].devices, r.rate * 10);
      const bytes = Math.round(((r.peak_anon_mib - r.anon_start_mib) * 1048576) / groups);
      rows.push(`| ${id} | ${k(r.rate)} | ${groups.toLocaleString("en-US")} | ${r.anon_start_mib} → ${r.peak_anon_mib} | ${bytes} | ${lagCell(r)} | ${r.pass ? "pass" : "**fail**"} | ${r.load_before[0]} |`);
    }
  }
  if (!rows.length) return [];
  return [
    "## Memory per open window group",
    "",
    "Anonymous memory at the start of the measured send → its peak, divided by the groups one 10 s window holds",
    "(min(devices, rate × 10)); an upper bound, as the peak also holds the emission's rows and garbage not yet collected.",
    "",
    "| workload | rate | groups per window | anon MiB start → peak | bytes per group | lag p99.9 / max ms | verdict | load |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
  ];
}
