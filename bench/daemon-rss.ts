/**
 * Daemon memory: idle RSS of `floe serve` holding 100 stopped rules and 10 running
 * MQTT rules (a real mosquitto on a free port), then RSS growth over N create+delete cycles of a
 * running rule over REST. Loopback only; bounded loop.
 *
 *   node_modules/.bin/bun bench/daemon-rss.ts [cycles=10000]
 */
import { readFileSync } from "node:fs";
import { Mosquitto } from "../test/helpers/mosquitto.ts";
import { startFloe, tempHome } from "../test/server/daemon.ts";

const cycles = Number(process.argv[2] ?? 10_000);

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

/**
 * RSS once the daemon has settled after a burst of requests: its idle collector runs 3 s after the
 * last request, and JSC's JIT compiler threads, which hold the memory of their compilations, exit
 * after 10 s without work; 15 s covers both.
 */
async function settledRss(pid: number, ms = 15_000): Promise<number> {
  await Bun.sleep(ms);
  return rssKb(pid);
}

const broker = await Mosquitto.start();
const d = await startFloe(tempHome(), { MQTT_SOURCE__DEFAULT__SERVER: broker.url });
const pid = d.proc.pid;
const must = async (method: string, path: string, body: object, status: number) => {
  const r = await d.call(method, path, body);
  if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
};

const bare = await settledRss(pid, 1000);
await must("POST", "/streams", { sql: 'CREATE STREAM bench (v bigint) WITH (DATASOURCE="bench/in", FORMAT="json")' }, 201);
for (let i = 0; i < 100; i++) await must("POST", "/rules", { id: `stopped${i}`, sql: "SELECT v FROM bench WHERE v > 1", actions: [{ nop: {} }], triggered: false }, 201);
for (let i = 0; i < 10; i++) await must("POST", "/rules", { id: `running${i}`, sql: "SELECT v * 2 AS w FROM bench", actions: [{ mqtt: { server: broker.url, topic: `bench/out${i}` } }] }, 201);
const idle = await settledRss(pid);
const status = JSON.parse((await d.call("GET", "/rules/status/all")).text) as Record<string, { status: string }>;
const running = Object.values(status).filter((s) => s.status === "running").length;

const churn = { id: "churn", sql: "SELECT v FROM bench WHERE v > 10", actions: [{ nop: {} }] };
const t0 = performance.now();
const warm = Math.min(500, cycles);
// RSS after 0, 100, 500, 2500, 5000 … cycles (each after the daemon's idle collection).
const series: [number, number][] = [[0, idle]];
const marks = new Set([100, warm, 2500, 5000, 7500, cycles]);
for (let i = 1; i <= cycles; i++) {
  await must("POST", "/rules", churn, 201);
  await must("DELETE", "/rules/churn", {}, 200);
  if (marks.has(i) && i < cycles) series.push([i, await settledRss(pid)]);
}
const before = series.find(([n]) => n === warm)![1];
const seconds = (performance.now() - t0) / 1000;
const after = await settledRss(pid);
series.push([cycles, after]);
await d.stop();
await broker.stop();

const result = {
  bareRssKb: bare,
  idleRssKb: idle,
  rules: { stopped: 100, running },
  churn: {
    cycles,
    seconds: Math.round(seconds * 10) / 10,
    rssKbByCycles: series,
    growthPctFromIdle: Math.round(((after - idle) / idle) * 1000) / 10,
    growthPctAfterWarmup: Math.round(((after - before) / before) * 1000) / 10,
  },
};
console.log(JSON.stringify(result, null, 2));
