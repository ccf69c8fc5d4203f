/**
 * Bytes per open group of W2-1M's rule (issue 25): the rule planned in-process on a virtual clock,
 * `--groups` distinct devices sent into one 10 s tumbling window — each message a JSON payload
 * parsed as the daemon's json decoder parses it (`{"id","device","temp","speed"}`, no metadata:
 * the rule reads none) — then, after a full collection, the heap growth (bun:jsc heapStats) and
 * the process's anonymous memory growth (RssAnon of /proc/self/status) divided by the groups.
 * Then the window fires into a sink that encodes each row as JSON (the stdout sink's rows): the
 * anonymous memory right after the emission (no collection forced: the old window's groups, what
 * the emission made and the next window's index), and the heap after a full collection. Three
 * windows of new devices in a row show what an earlier window leaves held. Output: one JSON line;
 * its `hash` of the encoded rows must match between trees (the output is exact).
 *   node_modules/.bin/bun bench/group-bytes.ts [--groups 200000] [--root DIR]
 * `--root` runs another checkout's lib/ in this process shape (before and after side by side).
 */
import { heapStats } from "bun:jsc";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values: a } = parseArgs({ options: { groups: { type: "string", default: "200000" }, root: { type: "string" } } });
const ROOT = resolve(a.root ?? join(import.meta.dir, ".."));
const N = Number(a.groups);
const T0 = 1_700_000_000_000;
const SQL = "SELECT device, count(*) AS n, avg(temp) AS avg_temp, max(speed) AS max_speed FROM telem GROUP BY device, TUMBLINGWINDOW(ss, 10)";

const { createFunctionRegistry } = await import(join(ROOT, "lib/functions/index.ts"));
const { Tuple } = await import(join(ROOT, "lib/expr/row.ts"));
const { UTC } = await import(join(ROOT, "lib/value/time.ts"));
const { StdoutSink } = await import(join(ROOT, "lib/connectors/stdio/stdout.ts"));
const { planSelect } = await import(join(ROOT, "lib/plan/plan.ts"));
const { streamDef } = await import(join(ROOT, "lib/plan/streams.ts"));
const { Topology } = await import(join(ROOT, "lib/runtime/topology.ts"));
const { parseRuleFile } = await import(join(ROOT, "lib/sql/parse.ts"));
const { VirtualClock } = await import(join(ROOT, "lib/ops/window/clock.ts"));

const anonKiB = (): number => Number(/RssAnon:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]);
const heap = (): number => {
  Bun.gc(true);
  return heapStats().heapSize;
};

const functions = createFunctionRegistry();
const file = parseRuleFile(`CREATE STREAM telem () WITH (FORMAT="JSON");\n${SQL}`, functions);
const defs = new Map(file.creates.map((c: { name: string }) => [c.name, streamDef(c)]));
const clock = new VirtualClock(T0);
const env = { now: () => clock.now(), zone: UTC, ruleId: "r", ruleStart: T0 };
const { plan } = planSelect(file.select, defs, { env, zone: UTC, isEventTime: false, functions });
let lines = 0;
let hash = 0;
const write = (t: string) => {
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 10) lines++;
    hash = (hash * 31 + c) | 0;
  }
};
const sink = new StdoutSink("rows", write, () => clock.now());
const topo = new Topology(plan, { now: () => clock.now(), sendError: true, clock, zone: UTC }, [sink]);

/** One window's messages, `n` devices of prefix `dev` once each, in the 10 s window from `start`. */
function send(dev: string, n: number, start: number): void {
  for (let k = 0; k < n; k++) {
    const ts = start + Math.floor((k * 9000) / n);
    clock.advance(ts);
    const payload = `{"id":"t_0_${k}","device":"${dev}${k}","temp":${20.05 + (k % 150) / 10},"speed":${(k % 1300) / 10 + 0.05},"ts":${ts}}`;
    topo.ingest("telem", new Tuple(JSON.parse(payload), null, ts, "telem"));
  }
}

// As the ladder: a warm-up window of other devices, then windows of devices never seen before
// (the generator sends device k·C + c, so a 20 s step at 20k msg/s meets 400,000 devices once).
const W = 10_000;
let end = Math.ceil(T0 / W) * W + W;
send("warm_", 2000, end - W + 1);
clock.advance(end);
const h0 = heap();
const a0 = anonKiB();
const windows: Record<string, number>[] = [];
for (let w = 0; w < 3; w++) {
  lines = 0;
  send(`dev${w}_`, N, end + 1);
  end += W;
  const open = heap();
  const anon = anonKiB();
  clock.advance(end);
  const emittedAnon = anonKiB();
  const after = heap();
  windows.push({
    open_heap_b_per_group: Math.round((open - h0) / N),
    open_anon_b_per_group: Math.round(((anon - a0) * 1024) / N),
    emitted_anon_b_per_group: Math.round(((emittedAnon - a0) * 1024) / N),
    after_emission_b_per_group: Math.round((after - h0) / N),
    emitted: lines,
  });
}
console.log(JSON.stringify({ root: ROOT, groups: N, base_heap_mib: +(h0 / 2 ** 20).toFixed(1), windows, hash }));
