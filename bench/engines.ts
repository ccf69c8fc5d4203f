/**
 * The engines under test, each started pinned to the engine CPU with one rule over the bench
 * broker and a file sink, and each exposing live counters (source in, sink out, exceptions):
 *   floe      the daemon (`floe serve`), stream and rule created over REST, counters from
 *             GET /rules/bench/status (eKuiper's keys);
 *   node-red  Node-RED 4 (npm, installed by the harness into bench/.node-red/, git-ignored),
 *             headless, a flow MQTT in → function → file, counters from an http-in endpoint;
 *   floor     the workload written by hand on floe's lean MQTT reader (bench/floor.ts): what the
 *             runtime costs for the workload itself, the denominator of floe / floor.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { DEFAULT_FLOE_BIN } from "./arch.ts";
import { freePort } from "./broker.ts";
import { CPUS, pinned } from "./meter.ts";
import { countersOf, type Counters } from "./verify.ts";
import { streamSql, type Workload } from "./workloads.ts";

const ROOT = join(import.meta.dir, "..");

export type EngineKind = "floe" | "node-red" | "floor";

export interface Engine {
  readonly kind: EngineKind;
  readonly pid: number;
  /** How the engine was started (for RESULTS.md). */
  readonly command: string;
  counters(): Promise<Counters>;
  /** The full status (floe: the rule status object). */
  status(): Promise<Record<string, unknown>>;
  /** Output files of the sink. */
  outputs(): string[];
  /** floe: the Prometheus text of /metrics (event-loop lag). */
  metrics?(): Promise<string>;
  stop(): Promise<void>;
}

export interface EngineOptions {
  /** floe: the executable (default this machine's build from `make build`, else `bun cli.ts`). */
  bin?: string;
  /** floe: FLOE_MQTT_READER (lean | mqttjs). */
  reader?: string;
  /** floe: write a CPU profile (markdown too) into this directory; runs `bun cli.ts`. */
  profDir?: string;
  cpu?: number;
  /** Extra environment of the engine process (bench/run.ts --engine-env), e.g. a JSC option. */
  env?: Record<string, string>;
  /**
   * floe: publish the rule's rows to this topic on the bench broker (an MQTT sink, `sendSingle`)
   * instead of the file sink; the latency probe writes what arrives into the output directory.
   */
  mqttSinkTopic?: string;
}

async function waitFor<T>(what: string, f: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

async function stopProc(p: Subprocess): Promise<void> {
  p.kill("SIGTERM");
  const t = setTimeout(() => p.kill("SIGKILL"), 10_000);
  await p.exited;
  clearTimeout(t);
}

function outFiles(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort().map((f) => join(dir, f)) : [];
}

/** `K=V ` for each --engine-env variable, as the start command of RESULTS.md shows it. */
function envPrefix(env: Record<string, string> | undefined): string {
  return Object.entries(env ?? {}).map(([k, v]) => `${k}=${v} `).join("");
}

export function floeCommand(opts: EngineOptions): string[] {
  if (opts.profDir) return [process.execPath, "--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${opts.profDir}`, join(ROOT, "cli.ts")];
  if (opts.bin !== undefined) {
    if (!existsSync(opts.bin)) throw new Error(`${opts.bin} is missing`);
    return [opts.bin];
  }
  return existsSync(DEFAULT_FLOE_BIN) ? [DEFAULT_FLOE_BIN] : [process.execPath, join(ROOT, "cli.ts")];
}

export async function startFloe(w: Workload, brokerPort: number, dir: string, opts: EngineOptions = {}): Promise<Engine> {
  for (const d of ["etc", "data", "out"]) mkdirSync(join(dir, d), { recursive: true });
  const rest = freePort();
  const cmd = [...pinned(opts.cpu ?? CPUS.engine), ...floeCommand(opts), "serve", "--etc", join(dir, "etc"), "--data", join(dir, "data")];
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    KUIPER__BASIC__RESTPORT: String(rest),
    KUIPER__BASIC__PORT: "0",
    KUIPER__SOURCE__HTTPSERVERPORT: "0",
    // /metrics on the REST port: the step reads the event-loop lag histogram from it.
    KUIPER__BASIC__PROMETHEUS: "true",
    KUIPER__BASIC__PROMETHEUSPORT: String(rest),
    MQTT_SOURCE__DEFAULT__SERVER: `tcp://127.0.0.1:${brokerPort}`,
    MQTT_SOURCE__DEFAULT__QOS: String(w.qos),
  };
  if (opts.reader) env.FLOE_MQTT_READER = opts.reader;
  Object.assign(env, opts.env);
  const p = Bun.spawn(cmd, { cwd: dir, env, stdout: Bun.file(join(dir, "floe.out")), stderr: Bun.file(join(dir, "floe.err")) });
  const base = `http://127.0.0.1:${rest}`;
  const call = async (method: string, path: string, body?: object) => {
    const r = await fetch(base + path, { method, body: body ? JSON.stringify(body) : undefined });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return text;
  };
  await waitFor("floe serve", async () => ((await fetch(base + "/")).ok ? true : undefined));
  await call("POST", "/streams", { sql: streamSql(w) });
  const action = opts.mqttSinkTopic
    ? { mqtt: { server: `tcp://127.0.0.1:${brokerPort}`, topic: opts.mqttSinkTopic, qos: 0, sendSingle: true } }
    : { file: { path: join(dir, "out", "out.ndjson"), fileType: "lines", sendSingle: true, rollingInterval: 86_400_000, rollingCount: 0, rollingNamePattern: "suffix" } };
  await call("POST", "/rules", { id: "bench", sql: w.sql, actions: [action] });
  const status = async () => JSON.parse(await call("GET", "/rules/bench/status")) as Record<string, unknown>;
  await waitFor("the rule's MQTT connection", async () => ((await status()).source_telem_0_connection_status === 1 ? true : undefined));
  return {
    kind: "floe",
    pid: p.pid,
    command: `${envPrefix(opts.env)}${cmd.slice(pinned(opts.cpu ?? CPUS.engine).length).join(" ")} + POST /streams, POST /rules (${opts.mqttSinkTopic ? `mqtt sink to ${opts.mqttSinkTopic}` : "file sink"}${w.qos ? `, source QoS ${w.qos}` : ""})`,
    status,
    counters: async () => countersOf(await status()),
    outputs: () => outFiles(join(dir, "out")),
    metrics: () => call("GET", "/metrics"),
    stop: () => stopProc(p),
  };
}

// ---------------------------------------------------------------------------------------------
// Node-RED

export const NODE_RED_VERSION = "4.1.8";
const NR_DIR = join(ROOT, "bench/.node-red");
const NR_MAIN = join(NR_DIR, "node_modules/node-red/red.js");

/** Installs Node-RED into bench/.node-red/ (outside the project's dependencies) once. */
export async function ensureNodeRed(): Promise<string> {
  if (existsSync(NR_MAIN)) return NR_MAIN;
  mkdirSync(NR_DIR, { recursive: true });
  writeFileSync(join(NR_DIR, "package.json"), JSON.stringify({ name: "floe-bench-node-red", private: true }) + "\n");
  const p = Bun.spawnSync(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", `node-red@${NODE_RED_VERSION}`], { cwd: NR_DIR, stdout: "inherit", stderr: "inherit" });
  if (p.exitCode !== 0 || !existsSync(NR_MAIN)) throw new Error(`npm install node-red@${NODE_RED_VERSION} failed in ${NR_DIR}`);
  return NR_MAIN;
}

/** W1: filter and project; W2: per-device 10 s tumbling count/avg/max (wall-clock aligned). */
const NR_FUNCS: Partial<Record<Workload["id"], { init: string; func: string }>> = {
  w1: {
    init: "",
    func: [
      "const s = global.get('stats'); s.in++;",
      "const p = msg.payload;",
      "if (p.temp > 21.0) { s.out++; return { payload: JSON.stringify({ id: p.id, device: p.device, temp: p.temp, speed_kmh: p.speed * 3.6 }) }; }",
      "return null;",
    ].join("\n"),
  },
  w2: {
    init: [
      "const s = global.get('stats');",
      "const win = new Map(); context.set('win', win);",
      "const tick = () => {",
      "  const rows = [];",
      "  for (const [d, a] of win) rows.push({ payload: JSON.stringify({ device: d, n: a.n, avg_temp: a.sum / a.n, max_speed: a.max }) });",
      "  win.clear(); s.out += rows.length;",
      "  if (rows.length) node.send([rows]);",
      "  setTimeout(tick, 10000 - (Date.now() % 10000));",
      "};",
      "setTimeout(tick, 10000 - (Date.now() % 10000));",
    ].join("\n"),
    func: [
      "const s = global.get('stats'); s.in++;",
      "const p = msg.payload; const win = context.get('win');",
      "let a = win.get(p.device);",
      "if (!a) { a = { n: 0, sum: 0, max: -Infinity }; win.set(p.device, a); }",
      "a.n++; a.sum += p.temp; if (p.speed > a.max) a.max = p.speed;",
      "return null;",
    ].join("\n"),
  },
};

export function nodeRedSupports(w: Workload): boolean {
  return w.id in NR_FUNCS;
}

export async function startNodeRed(w: Workload, brokerPort: number, dir: string, opts: EngineOptions = {}): Promise<Engine> {
  const fn = NR_FUNCS[w.id];
  if (!fn) throw new Error(`no Node-RED flow for ${w.id}`);
  const main = await ensureNodeRed();
  mkdirSync(join(dir, "out"), { recursive: true });
  const port = freePort();
  const out = join(dir, "out", "out.ndjson");
  const flows = [
    { id: "b0000000000000a0", type: "tab", label: "bench" },
    { id: "b0000000000000a1", type: "mqtt-broker", name: "bench", broker: "127.0.0.1", port: String(brokerPort), clientid: `nr-bench-${process.pid}`, autoConnect: true, usetls: false, protocolVersion: "4", keepalive: "60", cleansession: true },
    { id: "b0000000000000a2", type: "mqtt in", z: "b0000000000000a0", topic: w.subscription, qos: "0", datatype: "json", broker: "b0000000000000a1", nl: false, rap: true, rh: 0, inputs: 0, wires: [["b0000000000000a3"]] },
    { id: "b0000000000000a3", type: "function", z: "b0000000000000a0", name: w.id, func: fn.func, initialize: fn.init, finalize: "", outputs: 1, libs: [], wires: [["b0000000000000a4"]] },
    { id: "b0000000000000a4", type: "file", z: "b0000000000000a0", filename: out, filenameType: "str", appendNewline: true, createDir: true, overwriteFile: "false", encoding: "none", wires: [[]] },
    { id: "b0000000000000a5", type: "http in", z: "b0000000000000a0", url: "/stats", method: "get", wires: [["b0000000000000a6"]] },
    { id: "b0000000000000a6", type: "function", z: "b0000000000000a0", func: "msg.payload = global.get('stats'); return msg;", outputs: 1, wires: [["b0000000000000a7"]] },
    { id: "b0000000000000a7", type: "http response", z: "b0000000000000a0", wires: [] },
  ];
  writeFileSync(join(dir, "flows.json"), JSON.stringify(flows, null, 2));
  writeFileSync(
    join(dir, "settings.js"),
    `module.exports = ${JSON.stringify({
      uiPort: port,
      uiHost: "127.0.0.1",
      flowFile: "flows.json",
      userDir: dir,
      httpAdminRoot: false,
      credentialSecret: false,
      logging: { console: { level: "warn", metrics: false, audit: false } },
      telemetry: { enabled: false },
      diagnostics: { enabled: false },
      externalModules: { autoInstall: false },
    }).replace(/}$/, ", functionGlobalContext: { stats: { in: 0, out: 0 } } }")};\n`,
  );
  const node = Bun.which("node") ?? "node";
  const cmd = [...pinned(opts.cpu ?? CPUS.engine), node, main, "--userDir", dir, "--settings", join(dir, "settings.js")];
  const p = Bun.spawn(cmd, { cwd: dir, stdout: Bun.file(join(dir, "node-red.out")), stderr: Bun.file(join(dir, "node-red.err")) });
  const stats = async () => (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as { in: number; out: number };
  await waitFor("Node-RED", async () => (typeof (await stats()).in === "number" ? true : undefined), 60_000);
  return {
    kind: "node-red",
    pid: p.pid,
    command: `node bench/.node-red/node_modules/node-red/red.js --settings settings.js (flow: mqtt in → function ${w.id} → file; see bench/engines.ts)`,
    status: async () => ({ ...(await stats()) }),
    counters: async () => {
      const s = await stats();
      return { source_in: s.in, sink_out: s.out, exceptions: 0 };
    },
    outputs: () => outFiles(join(dir, "out")),
    stop: () => stopProc(p),
  };
}

// ---------------------------------------------------------------------------------------------
// The floor: bench/floor.ts under Bun, pinned like floe.

export async function startFloor(w: Workload, brokerPort: number, dir: string, opts: EngineOptions = {}): Promise<Engine> {
  mkdirSync(join(dir, "out"), { recursive: true });
  const port = freePort();
  const script = join(ROOT, "bench/floor.ts");
  const cmd = [...pinned(opts.cpu ?? CPUS.engine), process.execPath, script, "--workload", w.id, "--broker", String(brokerPort), "--out", join(dir, "out", "out.ndjson"), "--http", String(port)];
  const env = { ...(process.env as Record<string, string>), ...opts.env };
  const p = Bun.spawn(cmd, { cwd: dir, env, stdout: Bun.file(join(dir, "floor.out")), stderr: Bun.file(join(dir, "floor.err")) });
  const base = `http://127.0.0.1:${port}`;
  const stats = async () => (await (await fetch(`${base}/status`)).json()) as { in: number; out: number; exceptions: number };
  await waitFor("the floor's subscription", async () => ((await Bun.file(join(dir, "floor.err")).text()).includes("subscribed") ? true : undefined));
  return {
    kind: "floor",
    pid: p.pid,
    command: `bun bench/floor.ts --workload ${w.id} (hand-written ${w.id} on floe's lean MQTT reader, file output)`,
    status: async () => ({ ...(await stats()) }),
    counters: async () => {
      const s = await stats();
      return { source_in: s.in, sink_out: s.out, exceptions: s.exceptions };
    },
    outputs: () => outFiles(join(dir, "out")),
    metrics: async () => (await fetch(`${base}/metrics`)).text(),
    stop: () => stopProc(p),
  };
}

export function startEngine(kind: EngineKind, w: Workload, brokerPort: number, dir: string, opts: EngineOptions = {}): Promise<Engine> {
  if (kind === "floor") return startFloor(w, brokerPort, dir, opts);
  return kind === "floe" ? startFloe(w, brokerPort, dir, opts) : startNodeRed(w, brokerPort, dir, opts);
}
