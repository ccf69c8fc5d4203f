/**
 * The sink cache's cost ("acknowledged means durable"): items/s pushed through one
 * sink pipeline with `enableCache` — JSON rows of ~90 bytes, `sendSingle`, default cache
 * properties — in batches of 1,024 as the rule's inlet delivers them (the pipeline's `flush`,
 * where it exists, at the end of each batch, as the inlet does), in three cases:
 *   down  — an MQTT sink whose broker is down (a closed port): everything goes to the cache;
 *   up    — a nop sink: the cache is on, the sink keeps up;
 *   off   — a nop sink without the cache (the floor).
 * For `down` the rate is pushes only (the cache fills); for `up`/`off` it is until the queue is
 * empty. Runs on any floe revision with the same SinkPipeline API (so the write-through can be
 * compared with the revision before it):
 *   node_modules/.bin/bun bench/sink-cache.ts [--items N] [--runs R]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseSinkCommon } from "../lib/sink/common.ts";
import { createSinkConnector } from "../lib/connectors/sinks.ts";
import { SinkPipeline } from "../lib/sink/pipeline.ts";
import { MemoryPubSub } from "../lib/connectors/memory/pubsub.ts";
import { Emission } from "../lib/core/item.ts";
import { freePort } from "../test/helpers/mosquitto.ts";
import { createNetGuard } from "../lib/net/guard.ts";

const args = process.argv.slice(2);
const opt = (name: string, def: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const ITEMS = opt("--items", 200_000);
const RUNS = opt("--runs", 3);
const BATCH = 1024;

type Case = "down" | "up" | "off";

/** items/s (wall) and CPU µs per item (user + system: steadier than wall on a loaded machine). */
async function once(kind: Case, deadPort: number): Promise<[number, number]> {
  const dir = mkdtempSync(join(tmpdir(), "floe-bench-cache-"));
  const props: Record<string, unknown> =
    kind === "down" ? { server: `tcp://127.0.0.1:${deadPort}`, topic: "bench/out", sendSingle: true, enableCache: true } : { sendSingle: true, enableCache: kind === "up" };
  const type = kind === "down" ? "mqtt" : "nop";
  const p = new SinkPipeline({
    ruleId: `bench_${kind}`,
    type,
    index: 0,
    props,
    common: parseSinkCommon(props),
    connector: createSinkConnector(type, props, { pubsub: new MemoryPubSub(), outbound: createNetGuard() }),
    dataDir: dir,
    log: () => {},
  });
  p.open();
  const flush = (p as unknown as { flush?: () => void }).flush?.bind(p);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < ITEMS; ) {
    const end = Math.min(ITEMS, i + BATCH);
    for (; i < end; i++) p.push(new Emission([{ id: i, device: `d${i % 100}`, temperature: 20 + (i % 17) / 10, ok: true }], null));
    flush?.();
    // The next batch arrives in a later task, as from a socket: the worker and microtasks run.
    await new Promise<void>((r) => setImmediate(r));
  }
  if (kind !== "down") while (p.queued > 0) await new Promise<void>((r) => setImmediate(r));
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  if (kind === "down" && p.queued !== ITEMS) throw new Error(`cache holds ${p.queued}, want ${ITEMS}`);
  await p.close(0);
  rmSync(dir, { recursive: true, force: true });
  return [(ITEMS / ms) * 1000, (c.user + c.system) / ITEMS];
}

const deadPort = await freePort();
console.log(`items ${ITEMS}, batches of ${BATCH}, ${RUNS} runs, load ${loadavg()[0]!.toFixed(2)}`);
for (const kind of ["down", "up", "off"] as Case[]) {
  const runs: [number, number][] = [];
  for (let r = 0; r < RUNS; r++) runs.push(await once(kind, deadPort));
  const med = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
  const rate = med(runs.map((x) => x[0]));
  const cpu = med(runs.map((x) => x[1]));
  console.log(
    `${kind.padEnd(5)} median ${Math.round(rate).toLocaleString("en")} items/s, ${cpu.toFixed(2)} CPU µs/item  (${runs.map((x) => Math.round(x[0]).toLocaleString("en")).join(", ")})`,
  );
}
process.exit(0);
