/**
 * Replay files for bench.md's workloads: NDJSON envelopes for `floe run --replay`, the payload of
 * bench.md §Method 4 at a fixed virtual rate, devices round-robin:
 * `{"ts":<ms>,"data":{"id":…,"device":"dev_<n>","temp":…,"speed":…,"ts":<ms>}}`, and for W3
 * (FORMAT="binary") `{"ts":<ms>,"raw":"<base64 of 21.4>","meta":{"topic":"bench/esphome/dev_<n>/…"}}`.
 * Deterministic: the first k lines of a longer file are the file of k records.
 *   node_modules/.bin/bun bench/replay-gen.ts w1|w2|w3|w4|w5 [records] [rate]
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";

export const WORKLOADS = {
  w1: { devices: 1_000, rule: "bench/rules/w1.sql" },
  w3: { devices: 10_000, rule: "bench/rules/w3.sql" },
  w2: { devices: 1_000, rule: "bench/rules/w2.sql" },
  w4: { devices: 10_000, rule: "bench/rules/w4.sql" },
  w5: { devices: 2_000, rule: "bench/rules/w5.sql" },
} as const;
export type Workload = keyof typeof WORKLOADS;

/** Virtual records per second: 1,000,000 records span 100 s, ten 10 s windows. */
export const DEFAULT_RATE = 10_000;
const START = 1_700_000_000_000;

export function replayPath(root: string, w: Workload, records: number, rate = DEFAULT_RATE): string {
  return join(root, "bench/data", `replay-${w}-${records}-${rate}.ndjson`);
}

export async function writeReplay(path: string, w: Workload, records: number, rate = DEFAULT_RATE): Promise<void> {
  const dir = join(path, "..");
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  const devices = WORKLOADS[w].devices;
  const out = Bun.file(path).writer();
  const raw = Array.from({ length: 150 }, (_, i) => Buffer.from(String(20.0 + i / 10)).toString("base64"));
  for (let k = 0; k < records; k++) {
    const ts = START + Math.floor((k * 1000) / rate);
    // Formatted as bench.md's generator (JavaScript) writes them: 20.0 is written 20, an integer.
    const temp = 20.0 + (k % 150) / 10;
    const speed = (k % 1300) / 10;
    if (w === "w3") out.write(`{"ts":${ts},"raw":"${raw[k % 150]}","meta":{"topic":"bench/esphome/dev_${k % devices}/sensor/temperature/state"}}\n`);
    else out.write(`{"ts":${ts},"data":{"id":"${w}_0_${k}","device":"dev_${k % devices}","temp":${temp},"speed":${speed},"ts":${ts}}}\n`);
    if ((k & 0xffff) === 0) await out.flush();
  }
  await out.end();
}

if (import.meta.main) {
  const w = process.argv[2] as Workload;
  if (!(w in WORKLOADS)) throw new Error("usage: bench/replay-gen.ts w1|w2|w3|w4|w5 [records] [rate]");
  const records = Number(process.argv[3] ?? 1_000_000);
  const rate = Number(process.argv[4] ?? DEFAULT_RATE);
  const path = replayPath(join(import.meta.dir, ".."), w, records, rate);
  await writeReplay(path, w, records, rate);
  console.log(path);
}
