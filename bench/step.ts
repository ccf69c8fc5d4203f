/**
 * One measured step of bench.md's method: a fresh bounded broker, the engine pinned to CPU 1, the
 * generator (in this process) and the broker to CPU 0 (meter.ts CPUS), the warm-up burst, the open-loop send, the
 * end-of-send gap from the engine's own source counter, CPU and memory meters, then the exact proof
 * on the sink output cross-checked with the engine's counters.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBroker } from "./broker.ts";
import { startEngine, type EngineKind, type EngineOptions } from "./engines.ts";
import { Generator, type GenResult } from "./gen.ts";
import { lagBetween, parseLag, type LagStep } from "./lag.ts";
import { SendTable, type StepLatency } from "./latency.ts";
import { startProbe, type Probe } from "./latency-run.ts";
import { CPUS, cpuSeconds, load, memKb, MemSampler, mib } from "./meter.ts";
import { crossCheck, verify, type CrossCheck, type Counters, type Proof } from "./verify.ts";
import type { Workload } from "./workloads.ts";

export const MAX_GAP = 4096;

export interface StepResult {
  workload: string;
  engine: EngineKind;
  rate: number;
  seconds: number;
  pass: boolean;
  /** Why the step failed (empty when it passed). */
  why: string[];
  on_schedule: boolean;
  sent: number;
  gap: number;
  lost: number;
  duplicates: number;
  extras: number;
  /** Engine CPU over the send, as % of its one core. */
  cpu_pct: number;
  /** Engine CPU from the first send to the last window flushed, per message sent. */
  us_per_msg: number;
  cpu_s: number;
  /** How long the engine took to answer the status request that measured the gap. */
  gap_read_ms: number;
  /** Seconds from the end of the send until the output stopped growing (window steps wait 11 s on purpose). */
  drain_s: number;
  peak_rss_mib: number;
  peak_anon_mib: number;
  /** RssAnon when the measured send started (after the warm-up): peak − this is what the step's state grew by. */
  anon_start_mib: number;
  /** Publish → sink latency (`--latency`: floe's rows through an MQTT sink to the probe); null otherwise. */
  latency: StepLatency | null;
  /** floe's event-loop lag during the send (bench/lag.ts); null for engines without the probe. */
  lag: LagStep | null;
  /** [seconds since the send started, VmRSS KiB, RssAnon KiB] every ~5 s. */
  rss_series: [number, number, number][];
  load_before: number[];
  load_after: number[];
  warmup_msgs: number;
  gen: Omit<GenResult, "per_second" | "sent_per_conn"> & { per_second_min: number; per_second_max: number };
  proof: Proof;
  cross: CrossCheck;
  engine_command: string;
  command: string;
  at: string;
}

export interface StepOptions extends EngineOptions {
  conns?: number;
  /** Keep the sink output (default: removed once proved). */
  keep?: boolean;
  /** The command line that reproduces this step (for RESULTS.md). */
  command?: string;
  /** Seconds of warm-up at the step's rate before the measured send (default WARM_SECONDS). */
  warmSeconds?: number;
  /** floe only: its rows go out through an MQTT sink and the latency probe measures their arrival (bench/latency.ts). */
  latency?: boolean;
}

/** The topic of floe's MQTT sink in a latency step. */
const OUT_TOPIC = "bench/out";

/**
 * The warm-up at the step's own rate: JavaScriptCore keeps compiling for 10–20 s of a new load (bench/notes.md,
 * "session 7"), and a step that measures those compilations charges a runtime's start to its µs/msg.
 */
export const WARM_SECONDS = 10;

async function settle(read: () => Promise<number>, quietMs: number, maxMs: number): Promise<number> {
  let prev = await read();
  let since = Date.now();
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    await Bun.sleep(100);
    const v = await read();
    if (v !== prev) {
      prev = v;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) break;
  }
  return prev;
}

export async function runStep(kind: EngineKind, w: Workload, rate: number, seconds: number, opts: StepOptions = {}): Promise<StepResult> {
  const dir = mkdtempSync(join(tmpdir(), `floe-bench-${w.id}-`));
  const broker = await startBroker(CPUS.load);
  if (opts.latency && kind !== "floe") throw new Error("latency steps measure floe (its MQTT sink)");
  let probe: Probe | undefined;
  if (opts.latency) {
    mkdirSync(join(dir, "out"), { recursive: true });
    // The plain subscriber of the input only where rows carry the message's id (not for windows).
    probe = await startProbe({ port: broker.port, out: OUT_TOPIC, in: w.proof === "window" ? undefined : w.subscription, file: join(dir, "out", "out.ndjson"), arrivals: join(dir, "arrivals"), tag: "run" });
  }
  const engine = await startEngine(kind, w, broker.port, dir, { ...opts, mqttSinkTopic: opts.latency ? OUT_TOPIC : undefined });
  const conns = opts.conns ?? 8;
  const gen = await Generator.open(broker.port, conns);
  try {
    // Warm-up: a burst of its own tag and devices until the engine's source counter shows it, then the
    // same at the step's rate so that the measured send finds the engine's code compiled.
    let warm = 0;
    for (let i = 0; i < 40 && (await engine.counters()).source_in === 0; i++) {
      warm += (await gen.run(w, "warm", 2000, 0.25, { devicePrefix: "warm_", devices: 10 })).sent;
      await Bun.sleep(250);
    }
    const warmSeconds = opts.warmSeconds ?? WARM_SECONDS;
    if (warmSeconds > 0) warm += (await gen.run(w, "warm", rate, warmSeconds, { devicePrefix: "warm_", devices: 10 })).sent;
    const before: Counters = { ...(await engine.counters()) };
    before.source_in = await settle(async () => (await engine.counters()).source_in, 500, 5000);
    if (before.source_in === 0) throw new Error("warm-up: the engine's source never counted a message");

    const pid = engine.pid;
    const anonStart = memKb(pid).anon;
    const mem = new MemSampler(pid);
    const load0 = load();
    const lag0 = engine.metrics ? parseLag(await engine.metrics()) : null;
    const sends = probe ? new SendTable(conns) : undefined;
    const c0 = cpuSeconds(pid);
    const g = await gen.run(w, "run", rate, seconds, sends ? { onWrite: (c, end, t) => sends.record(c, end, t) } : {});
    const sendEnd = performance.now();
    const cSend = cpuSeconds(pid);
    const inAtEnd = (await engine.counters()).source_in;
    const lag = lag0 && engine.metrics ? lagBetween(lag0, parseLag(await engine.metrics())) : null;
    // A busy engine answers its status late, and the gap it reports is then too small: keep the delay.
    const gapReadMs = Math.round(performance.now() - sendEnd);
    const gap = g.sent - (inAtEnd - before.source_in);
    // Drain: the source catches up, windows close (10 s tumbling / session max), the sink goes quiet.
    await settle(async () => (await engine.counters()).source_in, 1000, 30_000);
    if (w.proof === "window") await Bun.sleep(11_000);
    await settle(async () => (await engine.counters()).sink_out, 1500, 30_000);
    // A sink may count a row before it is in the file (Node-RED's file node queues writes): wait for the bytes.
    await settle(async () => engine.outputs().reduce((n, f) => n + Bun.file(f).size, 0), 2000, 180_000);
    const drain = (performance.now() - sendEnd) / 1000;
    const latency = probe && sends ? await probe.finish(sends, w.proof === "window") : null;
    const c1 = cpuSeconds(pid);
    const after = await engine.counters();
    mem.stop();
    const load1 = load();
    await engine.stop();
    const proof = await verify(engine.outputs(), { workload: w, tag: "run", sentPerConn: g.sent_per_conn });
    const cross = crossCheck(before, after, proof);
    const why: string[] = [];
    if (!g.on_schedule) why.push(`generator not on schedule: ${g.why.join("; ")}`);
    if (gap > MAX_GAP) why.push(`end-of-send gap ${gap} > ${MAX_GAP}`);
    if (!proof.ok) why.push(`proof failed: lost ${proof.lost}, duplicates ${proof.duplicates}, extras ${proof.extras}, keys ${proof.keys_seen}/${proof.keys_expected} (${proof.keys_wrong} wrong), malformed ${proof.malformed}`);
    if (!cross.ok) why.push(`counters disagree: ${cross.why.join("; ")}`);
    const cpu = c1 - c0;
    const { per_second, sent_per_conn: _, ...genRest } = g;
    const interior = per_second.slice(1, -1);
    return {
      workload: w.id,
      engine: kind,
      rate,
      seconds,
      pass: why.length === 0,
      why,
      on_schedule: g.on_schedule,
      sent: g.sent,
      gap,
      lost: proof.lost,
      duplicates: proof.duplicates,
      extras: proof.extras,
      cpu_pct: Math.round(((cSend - c0) / g.wall_s) * 1000) / 10,
      us_per_msg: Math.round(((cpu * 1e6) / g.sent) * 100) / 100,
      cpu_s: Math.round(cpu * 100) / 100,
      drain_s: Math.round(drain * 10) / 10,
      gap_read_ms: gapReadMs,
      peak_rss_mib: mib(mem.peakRss),
      peak_anon_mib: mib(mem.peakAnon),
      anon_start_mib: mib(anonStart),
      latency,
      lag,
      rss_series: mem.series,
      load_before: load0,
      load_after: load1,
      warmup_msgs: warm,
      gen: { ...genRest, per_second_min: interior.length ? Math.min(...interior) : 0, per_second_max: interior.length ? Math.max(...interior) : 0 },
      proof,
      cross,
      engine_command: engine.command,
      command: opts.command ?? "",
      at: new Date().toISOString(),
    };
  } finally {
    gen.close();
    probe?.kill();
    await engine.stop().catch(() => {});
    await broker.stop();
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** One line for the console. */
export function summary(r: StepResult): string {
  const ok = r.pass ? "PASS" : "FAIL";
  return (
    `${r.engine} ${r.workload} ${String(r.rate).padStart(6)}/s ${r.seconds}s ${ok} sent ${r.sent} gap ${r.gap} lost ${r.lost} dup ${r.duplicates} ` +
    `cpu ${r.cpu_pct}% ${r.us_per_msg} µs/msg rss ${r.peak_rss_mib} anon ${r.peak_anon_mib} MiB load ${r.load_before[0]}` +
    (r.latency ? ` latency ${latencyText(r.latency)}` : "") +
    (r.lag ? ` lag p99.9 ≤ ${r.lag.p999_ms} max ≤ ${r.lag.max_ms} ms${r.lag.within_budget ? "" : " (over budget)"}` : "") +
    (r.pass ? "" : ` — ${r.why.join(" | ")}`)
  );
}

/** `floe p50/p99/max 1.2/3.4/9 ms (subscriber …)` for the console and RESULTS.md. */
export function latencyText(l: StepLatency): string {
  const t = (s: StepLatency["floe"]) => `${s.p50_ms}/${s.p99_ms}/${s.max_ms} ms`;
  const what = l.kind === "window_close" ? "window close → sink" : "publish → sink";
  return `${what} p50/p99/max floe ${t(l.floe)}${l.subscriber ? `, subscriber ${t(l.subscriber)}` : ""}${l.unmatched ? ` (${l.unmatched} unmatched)` : ""}`;
}
