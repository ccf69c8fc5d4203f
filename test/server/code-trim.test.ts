/**
 * The daemon hands the executable's clean code pages back to the page cache 3 s after it starts
 * (runtime/code-pages.ts): the compiled `floe serve`'s file-backed resident memory falls, and the
 * daemon keeps serving. FLOE_CODE_TRIM_S=0 turns it off.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, tempHome } from "./daemon.ts";

const BIN = join(import.meta.dir, "../../dist/floe");

/** RssFile of a process, KiB. */
const rssFile = (pid: number) => Number(/RssFile:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);

test("dist/floe exists (run `make build` first; `make test` does)", () => {
  expect(existsSync(BIN)).toBe(true);
});

test("floe serve drops the start-up's code pages from its resident set and keeps serving", async () => {
  const d = await startFloe(tempHome(), {}, [], [BIN]);
  try {
    const atStart = rssFile(d.proc.pid);
    await waitFor(() => rssFile(d.proc.pid) < atStart * 0.6, () => `RssFile below 60 % of ${atStart} KiB (now ${rssFile(d.proc.pid)})`, 10_000, 100);
    expect((await d.call("GET", "/rules")).status).toBe(200);
    expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM s () WITH (DATASOURCE="t", TYPE="memory", FORMAT="json")' })).status).toBe(201);
  } finally {
    await d.stop();
  }
}, 30_000);

test("FLOE_CODE_TRIM_S=0 keeps the code pages resident", async () => {
  const d = await startFloe(tempHome(), { FLOE_CODE_TRIM_S: "0" }, [], [BIN]);
  try {
    const atStart = rssFile(d.proc.pid);
    // A fixed wait: time is the subject (the trim would come 3 s after the start).
    await Bun.sleep(4500);
    expect(rssFile(d.proc.pid)).toBeGreaterThan(atStart * 0.9);
  } finally {
    await d.stop();
  }
}, 30_000);
