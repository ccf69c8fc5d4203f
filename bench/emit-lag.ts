/**
 * The event-loop stall of one window emission (the lag budget: an emission may hold
 * the loop only briefly): a daemon rule (the streaming runtime, the sink pipeline, a file sink) over a memory
 * stream, GROUP BY device over a 2 s tumbling window, with `--devices` groups (W2: 1,000, W4:
 * 10,000). The rows are published between firings; a 1 ms probe timer records how late it fires
 * while each window is emitted. Reports the longest stall per firing and the rows written.
 * `--whole` drops `sendSingle`: the sink writes each window as one JSON array (one line);
 * `--template` also renders that array through a dataTemplate (a top-level range); without
 * `--whole`, each row through a row template.
 *
 *   node_modules/.bin/bun bench/emit-lag.ts [--devices 10000] [--windows 4] [--whole [--template]] [--root DIR]
 * `--root` runs another checkout's lib/ (e.g. the base build's sources) in this same process
 * shape, so before and after can be measured side by side.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values: a } = parseArgs({ options: { devices: { type: "string", default: "10000" }, windows: { type: "string", default: "4" }, whole: { type: "boolean", default: false }, template: { type: "boolean", default: false }, root: { type: "string" } } });
const ROOT = resolve(a.root ?? join(import.meta.dir, ".."));
const devices = Number(a.devices);
const windows = Number(a.windows);

// A tree older than the rename of createCatalog (the root may be any checkout) has only the old name.
const fns = await import(join(ROOT, "lib/functions/index.ts"));
const createFunctionRegistry = fns.createFunctionRegistry ?? fns.createCatalog;
const { createRuntimeEnv } = await import(join(ROOT, "lib/runtime/env.ts"));
const { SourceHub } = await import(join(ROOT, "lib/runtime/sources.ts"));
const { Rule } = await import(join(ROOT, "lib/runtime/rule.ts"));
const { streamDef } = await import(join(ROOT, "lib/plan/streams.ts"));
const { parseStatement } = await import(join(ROOT, "lib/sql/parse.ts"));

const dir = mkdtempSync(join(tmpdir(), "floe-emit-lag-"));
const functions = createFunctionRegistry();
const env = createRuntimeEnv({ dataDir: dir, log: () => {}, sinkGraceMs: 1000 });
const hub = new SourceHub(env);
const sql = `CREATE STREAM m () WITH (TYPE="memory", DATASOURCE="bench/in")`;
const defs = new Map([["m", streamDef(parseStatement(sql, functions), sql)]]);
const out = join(dir, "out.ndjson");
const TEMPLATE = a.whole
  ? `[{{range $i, $r := .}}{{if $i}},{{end}}{"device":"{{$r.device}}","n":{{$r.n}},"max":{{$r.max_temp}}}{{end}}]`
  : `{"device":"{{.device}}","n":{{.n}},"max":{{.max_temp}}}`;
const rule = Rule.create(
  {
    id: "emit",
    sql: "SELECT device, count(*) AS n, avg(speed) AS avg_speed, max(temp) AS max_temp FROM m GROUP BY device, TUMBLINGWINDOW(ss, 2)",
    actions: [{ file: { path: out, fileType: "lines", sendSingle: !a.whole, rollingInterval: 86_400_000, rollingCount: 0, ...(a.template ? { dataTemplate: TEMPLATE } : {}) } }],
  },
  defs,
  env,
  hub,
);
const run = await rule.start();

// The probe: how late a 1 ms timer fires; the worst per 2 s period is the window's stall. On a
// shared machine a gap can also be time the process was not scheduled, so each gap's CPU time
// (user + system of the process) is kept too: the worst CPU-busy gap is the engine's own stall.
let last = performance.now();
let lastCpu = cpuMs();
let worst = 0;
let worstCpu = 0;
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
const probe = setInterval(() => {
  const now = performance.now();
  const cpu = cpuMs();
  if (now - last > worst) worst = now - last;
  if (cpu - lastCpu > worstCpu) worstCpu = cpu - lastCpu;
  last = now;
  lastCpu = cpu;
}, 1);

const stalls: number[] = [];
const cpuStalls: number[] = [];
let k = 0;
for (let w = 0; w < windows + 1; w++) {
  // Publish one row per device in batches of 500, yielding between them (as a source would).
  for (let i = 0; i < devices; i += 500) {
    const rows = [];
    for (let d = i; d < Math.min(devices, i + 500); d++, k++) rows.push({ device: `dev_${d}`, temp: 20 + (k % 150) / 10, speed: (k % 1300) / 10 });
    await env.pubsub.publish("bench/in", rows);
    await Bun.sleep(0);
  }
  // Wait for the firing after the publishes (the window is 2 s, aligned) and measure it.
  worst = 0;
  worstCpu = 0;
  last = performance.now();
  lastCpu = cpuMs();
  const due = 2000 - (Date.now() % 2000);
  await Bun.sleep(due + 300);
  if (w > 0) {
    // the first window is partial (and cold)
    stalls.push(Math.round(worst * 10) / 10);
    cpuStalls.push(Math.round(worstCpu * 10) / 10);
  }
}
clearInterval(probe);
await run.stop();
const lines = readFileSync(out, "utf8").split("\n").filter((l) => l);
// --whole: a line is a window's JSON array.
const rows = a.whole ? lines.reduce((n, l) => n + (JSON.parse(l) as unknown[]).length, 0) : lines.length;
rmSync(dir, { recursive: true, force: true });
const med = (xs: number[]) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)];
console.log(
  `${ROOT}${a.whole ? (a.template ? " (whole windows, dataTemplate)" : " (whole windows)") : a.template ? " (row template)" : ""}: ${devices} groups per window, ${windows} windows: longest gap per firing ${stalls.join(", ")} ms (median ${med(stalls)}); ` +
    `CPU in the busiest gap ${cpuStalls.join(", ")} ms (median ${med(cpuStalls)}); ${rows} rows written`,
);
process.exit(0);
