/**
 * The daemon hands the executable's clean code pages back to the page cache 3 s after it starts
 * (runtime/code-pages.ts): the compiled `floe serve`'s file-backed resident memory falls, and the
 * daemon keeps serving. A live `floe run` trims as well. FLOE_CODE_TRIM_S=0 turns it off.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Mosquitto } from "../helpers/mosquitto.ts";
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

test("a live floe run drops its start-up's code pages too and still ends on SIGINT", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-code-trim-"));
  const rule = join(dir, "live.sql");
  // An MQTT stream nobody publishes to, on a broker of the test's own: the run stays live until the signal.
  writeFileSync(rule, 'CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="idle/x"); SELECT * FROM s');
  const broker = await Mosquitto.start();
  const env = { ...process.env, MQTT_SOURCE__DEFAULT__SERVER: broker.url };
  const p = Bun.spawn([BIN, "run", rule], { cwd: dir, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  try {
    let err = "";
    void (async () => {
      for await (const c of p.stderr) err += new TextDecoder().decode(c);
    })();
    await waitFor(() => err.includes("subscribed"), () => `the source to subscribe (stderr: ${err})`);
    const atStart = rssFile(p.pid);
    await waitFor(() => rssFile(p.pid) < atStart * 0.6, () => `RssFile below 60 % of ${atStart} KiB (now ${rssFile(p.pid)})`, 10_000, 100);
    p.kill("SIGINT");
    expect(await p.exited).toBe(0);
  } finally {
    p.kill("SIGKILL");
    await broker.stop();
  }
}, 30_000);
