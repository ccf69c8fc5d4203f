/**
 * floe's per-message CPU on the MQTT daemon path without a broker: the rule runtime of
 * a checkout (`--root`, default this one) runs W1 (`SELECT … WHERE temp > 21.0`, file sink, lines)
 * on an MQTT stream whose connection is replaced by a stand-in that hands over the source's
 * PublishHandler. Batches of `--batch` publishes (payload views of one buffer, as frames.ts makes
 * them) are admitted one per macrotask, as the lean reader would after each read; everything after
 * the reader — admission, bus, decoder, operators, sink pipeline, file — is floe's real code. With
 * no network and a fixed batch size, two trees alternated (A B A B, pinned to one CPU) differ
 * by less than the harness's steps do; the generator, Mosquitto and the reader are not measured.
 *
 *   taskset -c 1 node_modules/.bin/bun bench/mqtt-path.ts [--root /path/to/base] [--messages 300000] [--batch 48] [--floor]
 *
 * `--floor` admits the same batches to bench/floor.ts's hand-written W1 loop instead of a rule.
 *
 * Prints µs of process CPU (user + system) per message after a 100,000-message warm-up.
 */
import { plugin } from "bun";
import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values: a } = parseArgs({ options: { root: { type: "string" }, messages: { type: "string" }, batch: { type: "string" }, floor: { type: "boolean" } } });
const ROOT = resolve(a.root ?? join(import.meta.dir, ".."));
const N = Number(a.messages ?? 300_000);
const BATCH = Number(a.batch ?? 48);
const DATA = join(import.meta.dir, "data/replay-w1-1000000-10000.ndjson");

interface Handler {
  admit(pubs: readonly unknown[], from: number, to: number): boolean;
  onDrain(fn: () => void): void;
}
const handlers: Handler[] = [];
/** Stands in for lib/connectors/mqtt/client.ts's MqttConnection: subscribed at once, never connects. */
class StandIn {
  readonly client = { on() {}, off() {} };
  readonly duplicates = 0;
  constructor(init: { handler: Handler }) {
    handlers.push(init.handler);
  }
  subscribe(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
(globalThis as Record<string, unknown>).__mqttStandIn = StandIn;
plugin({
  name: "mqtt-stand-in",
  setup(b) {
    b.onLoad({ filter: /lib\/io\/mqtt\/client\.ts$/ }, () => ({
      contents: "export const MqttConnection = globalThis.__mqttStandIn; export function defaultReader() { return 'lean'; }",
      loader: "js",
    }));
  },
});

const { Publish } = await import(join(ROOT, "lib/connectors/mqtt/frames.ts"));
const { testRuntime, streams, metric } = await import(join(ROOT, "test/helpers/runtime.ts"));
const payloads = readFileSync(DATA, "utf8")
  .split("\n", 20_000)
  .filter((l) => l)
  .map((l) => Buffer.from(JSON.stringify(JSON.parse(l).data)));
const t = testRuntime({ vars: { MQTT_SOURCE__DEFAULT__SERVER: "tcp://127.0.0.1:1" } });
const defs = streams(`CREATE STREAM telem () WITH (TYPE="mqtt", DATASOURCE="bench/telemetry", FORMAT="json")`);
const out = join(mkdtempSync(join(tmpdir(), "floe-mqtt-path-")), "out.ndjson");
const sink = { path: out, fileType: "lines", sendSingle: true, rollingInterval: 86_400_000, rollingCount: 0 };
const sql = "SELECT id, device, temp, speed * 3.6 AS speed_kmh FROM telem WHERE temp > 21.0";
let h: Handler;
let written: () => unknown;
let stop: () => Promise<void>;
if (a.floor) {
  const { floorLoop, LineWriter } = await import(join(ROOT, "bench/floor.ts"));
  const w = new LineWriter(openSync(out, "w"));
  const loop = floorLoop("w1", w);
  h = {
    admit(pubs, from, to) {
      for (let i = from; i < to; i++) loop.msg(pubs[i]);
      return true;
    },
    onDrain() {},
  };
  written = () => (w.flush(), w.rows);
  stop = async () => {};
} else {
  const rule = await t.rule({ id: "bench", sql, actions: [{ file: sink }] }, defs).start();
  while (handlers.length === 0) await Bun.sleep(1);
  h = handlers[0]!;
  written = () => metric(rule, "sink_file_0_0_records_out_total");
  stop = () => rule.stop();
}

let k = 0;
async function send(n: number): Promise<void> {
  const pubs: unknown[] = [];
  for (let sent = 0; sent < n; sent += BATCH) {
    pubs.length = 0;
    const parts: Buffer[] = [];
    for (let i = 0; i < BATCH; i++) parts.push(payloads[k++ % payloads.length]!);
    const buf = Buffer.concat(parts);
    let off = 0;
    for (const p of parts) {
      pubs.push(new Publish("bench/telemetry", buf.subarray(off, off + p.length), 0, 0, false, false, null));
      off += p.length;
    }
    while (!h.admit(pubs, 0, BATCH)) await new Promise<void>((r) => h.onDrain(r));
    await new Promise((r) => setImmediate(r));
  }
}

await send(100_000);
Bun.gc(true);
const c0 = process.cpuUsage();
await send(N);
await Bun.sleep(20);
const c = process.cpuUsage(c0);
const us = (x: number) => (x / N).toFixed(3);
console.log(`${a.floor ? "floor" : ROOT}: ${us(c.user + c.system)} µs/msg CPU (user ${us(c.user)}, system ${us(c.system)}), ${written()} rows written`);
await stop();
process.exit(0);
