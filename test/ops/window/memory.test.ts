/**
 * Incremental windows never keep rows: while a keyed tumbling window runs over many
 * windows, the heap holds at most one row per group of the open window (its non-aggregated
 * columns) — never the rows of closed windows, never a window's worth of rows.
 */
import { expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { UTC } from "../../../lib/value/time.ts";
import { runPipe } from "../../../lib/pipe/direct.ts";

const KEYS = 50;
const RECORDS = 60_000;

/**
 * Input lines in batches of 1,000; after every 10th batch (a window's worth, just before its
 * tick) a full GC and a count of live objects (JSC counts class instances as "Object").
 */
async function* input(samples: number[]): AsyncIterable<string[]> {
  const start = 1_700_000_000_000;
  for (let b = 0; b < RECORDS / 1000; b++) {
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const k = b * 1000 + i;
      // 1,000 records per second: 10,000 per 10 s window, six windows in all.
      lines.push(`{"ts":${start + k},"data":{"device":"dev_${k % KEYS}","temp":${20.05 + (k % 7) / 10},"id":${k}}}`);
    }
    yield lines;
    if (b % 10 === 9) {
      Bun.gc(true);
      samples.push(heapStats().objectTypeCounts.Object ?? 0);
    }
  }
}

async function liveObjects(evaluator: string): Promise<number[]> {
  const samples: number[] = [];
  let rows = 0;
  const res = await runPipe({
    sql: "SELECT device, count(*) AS n, avg(temp) AS t FROM telem GROUP BY device, TUMBLINGWINDOW(ss, 10)",
    options: { windowEvaluator: evaluator },
    input: input(samples),
    replay: true,
    emit: "rows",
    onEof: "flush",
    zone: UTC,
    write: (t) => void (rows += t.split("\n").length - 1),
    warn: (t) => void process.stderr.write(t),
  });
  expect(res.exitCode).toBe(0);
  expect(rows).toBe(6 * KEYS);
  return samples;
}

test("an incremental window holds one row per group, never the window's rows", async () => {
  const inc = await liveObjects("auto");
  const buffered = await liveObjects("buffered");
  // Flat across six windows: nothing accumulates with the records.
  expect(Math.max(...inc) - Math.min(...inc)).toBeLessThan(2000);
  // The buffered evaluator holds a window's 10,000 rows (a Tuple and a data object each) at the
  // same points; the incremental one only the open window's first row per group.
  expect(Math.min(...buffered) - Math.max(...inc)).toBeGreaterThan(15_000);
});
