/**
 * Pipe mode waits for standard output: while the reader lags (`drain` gives a promise) no further
 * input is read, so a slow consumer of `floe run` bounds its memory instead of output piling up.
 */
import { expect, test } from "bun:test";
import { UTC } from "../../lib/value/time.ts";
import { runPipe } from "../../lib/pipe/direct.ts";
import { waitFor } from "../helpers/wait.ts";

test("no input is read while standard output lags; everything arrives once it drains", async () => {
  const BATCHES = 5;
  const pulled: number[] = [];
  let release: () => void = () => {};
  let lag: Promise<void> | undefined;
  let written = "";
  async function* input(): AsyncIterable<string[]> {
    for (let b = 0; b < BATCHES; b++) {
      pulled.push(b);
      // 2,000 rows of ~30 bytes: past the sink's 64 KiB chunk, so every batch writes.
      yield Array.from({ length: 2000 }, (_, i) => JSON.stringify({ b, i, pad: "x".repeat(10) }));
    }
  }
  const run = runPipe({
    sql: "SELECT b, i FROM demo",
    options: {},
    input: input(),
    replay: false,
    emit: "rows",
    onEof: "flush",
    zone: UTC,
    write: (t) => {
      written += t;
      // The first write finds the reader stalled.
      if (!lag && pulled.length === 1) lag = new Promise<void>((r) => (release = r)).then(() => void (lag = undefined));
    },
    drain: () => lag,
    warn: (t) => void process.stderr.write(t),
  });
  await waitFor(() => lag !== undefined, "the first write to find the reader stalled");
  // A fixed wait, to show that nothing more is pulled while the write is stalled.
  await Bun.sleep(50);
  expect(pulled).toEqual([0]);
  expect(lag).toBeDefined();
  release();
  const res = await run;
  expect(res.exitCode).toBe(0);
  expect(pulled).toEqual([0, 1, 2, 3, 4]);
  const rows = written.trimEnd().split("\n").map((l) => JSON.parse(l) as { b: number; i: number });
  expect(rows.length).toBe(BATCHES * 2000);
  expect(rows[BATCHES * 2000 - 1]).toEqual({ b: 4, i: 1999 });
});
