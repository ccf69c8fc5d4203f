/**
 * The bench's floor engine (bench/floor.ts): its hand-written W1–W5 loops write what the
 * exact proof (bench/verify.ts) accepts for the payloads the generator sends (bench.md §Method 4),
 * so a floe / floor ratio compares two engines that did the same, proven work.
 */
import { expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { floorLoop, LineWriter } from "../../bench/floor.ts";
import { verify } from "../../bench/verify.ts";
import { deviceOf, WORKLOADS, type WorkloadId } from "../../bench/workloads.ts";
import { Publish } from "../../lib/connectors/mqtt/frames.ts";

const CONNS = 2;
// Every device of W3/W4 (10,000) must appear for the window and transform proofs.
const PER_CONN = 6000;

async function run(id: WorkloadId): Promise<Awaited<ReturnType<typeof verify>>> {
  const w = WORKLOADS[id];
  const file = join(mkdtempSync(join(tmpdir(), "floe-floor-")), "out.ndjson");
  const fd = openSync(file, "w");
  const out = new LineWriter(fd);
  const loop = floorLoop(id, out);
  const enc = new TextEncoder();
  for (let k = 0; k < PER_CONN; k++) {
    for (let c = 0; c < CONNS; c++) {
      const device = `dev_${deviceOf(c, k, CONNS, w.devices)}`;
      const temp = 20.0 + (k % 150) / 10;
      const text = w.payload === "text" ? String(temp) : JSON.stringify({ id: `run_${c}_${k}`, device, temp, speed: (k % 1300) / 10, ts: 0 });
      loop.msg(new Publish(w.topic(device), enc.encode(text), 0, 0, false, false, null));
    }
    // Windows close now and then, as the 10 s ticks would.
    if (k % 2500 === 2499) loop.flush?.();
  }
  loop.flush?.();
  out.flush();
  closeSync(fd);
  return verify([file], { workload: w, tag: "run", sentPerConn: Array(CONNS).fill(PER_CONN) });
}

for (const id of ["w1", "w2", "w3", "w4", "w5"] as WorkloadId[]) {
  test(`${id}: the floor's output passes the exact proof`, async () => {
    const p = await run(id);
    expect(p.notes).toEqual([]);
    expect({ ok: p.ok, lost: p.lost, duplicates: p.duplicates, extras: p.extras, malformed: p.malformed }).toEqual({ ok: true, lost: 0, duplicates: 0, extras: 0, malformed: 0 });
    expect(p.got).toBe(p.expected);
  });
}
