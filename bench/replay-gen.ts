/**
 * Replay files for bench.md's window workloads (W2, W4, W5): NDJSON envelopes
 * `{"ts":<ms>,"data":{"id":…,"device":"dev_<n>","temp":…,"speed":…,"ts":<ms>}}` for
 * `floe run --replay`, the payload of bench.md §Method 4 at a fixed virtual rate, devices
 * round-robin. Deterministic: the first k lines of a longer file are the file of k records.
 *   node_modules/.bin/bun bench/replay-gen.ts w2|w4|w5 [records] [rate]
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";

export const WORKLOADS = {
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
  for (let k = 0; k < records; k++) {
    const ts = START + Math.floor((k * 1000) / rate);
    // Formatted as bench.md's generator (JavaScript) writes them: 20.0 is written 20, an integer.
    const temp = 20.0 + (k % 150) / 10;
    const speed = (k % 1300) / 10;
    out.write(`{"ts":${ts},"data":{"id":"${w}_0_${k}","device":"dev_${k % devices}","temp":${temp},"speed":${speed},"ts":${ts}}}\n`);
    if ((k & 0xffff) === 0) await out.flush();
  }
  await out.end();
}

if (import.meta.main) {
  const w = process.argv[2] as Workload;
  if (!(w in WORKLOADS)) throw new Error("usage: bench/replay-gen.ts w2|w4|w5 [records] [rate]");
  const records = Number(process.argv[3] ?? 1_000_000);
  const rate = Number(process.argv[4] ?? DEFAULT_RATE);
  const path = replayPath(join(import.meta.dir, ".."), w, records, rate);
  await writeReplay(path, w, records, rate);
  console.log(path);
}
