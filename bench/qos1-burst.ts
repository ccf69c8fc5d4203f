/**
 * The QoS 1 burst: a default-configured mosquitto (`max_queued_messages 1000`,
 * `max_inflight_messages 20`) on a free port, `floe run` subscribed at QoS 1 with floe's defaults
 * and the reference `mosquitto_sub -q 1` on the same broker and topic, then N messages published
 * as fast as `mosquitto_pub -l -q 1` goes. Per run: what each subscriber received (distinct and
 * duplicates) and lost, and how often the broker logged that it dropped outgoing messages.
 *
 *   make build && node_modules/.bin/bun bench/qos1-burst.ts [--runs 20] [--messages 20000]
 *       [--bin dist/floe] [--env K=V]… [--no-sub] [--json FILE]
 *
 * `--bin` defaults to this machine's build (dist/floe, or dist/floe-linux-arm64 on arm64).
 * `--env` passes settings to floe (e.g. `--env MQTT_SOURCE__DEFAULT__PROTOCOLVERSION=3.1.1`,
 * `--env MQTT_SOURCE__DEFAULT__RECEIVEMAXIMUM=20`) to measure what each lever buys.
 * Exits 1 when floe lost anything in any run.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";
import { DEFAULT_FLOE_BIN } from "./arch.ts";
import { Mosquitto } from "../test/helpers/mosquitto.ts";

const ROOT = join(import.meta.dir, "..");
const TOPIC = "burst/in";

export interface Tally {
  /** Distinct burst messages received. */
  received: number;
  lost: number;
  duplicates: number;
}

export interface BurstRun {
  run: number;
  floe: Tally;
  sub: Tally | null;
  /** Lines of the broker's log that say it dropped outgoing messages (per client). */
  broker_drops: number;
  publish_s: number;
  load: number;
  /** What floe wrote to stderr. */
  floe_stderr: string;
}

/** Counts the burst's sequence numbers in NDJSON lines (`{"i":n}`), the warm-up line excluded. */
export function tally(text: string, n: number): Tally {
  const seen = new Uint8Array(n);
  let dups = 0;
  for (const line of text.split("\n")) {
    const m = /"i":\s*(\d+)/.exec(line);
    if (!m) continue;
    const i = Number(m[1]);
    if (i >= n) continue;
    if (seen[i]) dups++;
    else seen[i] = 1;
  }
  let got = 0;
  for (let i = 0; i < n; i++) got += seen[i]!;
  return { received: got, lost: n - got, duplicates: dups };
}

async function waitFor(what: string, f: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** Waits until `read` stops changing for `quietMs` (at most `maxMs`). */
async function settle(read: () => number, quietMs: number, maxMs: number): Promise<void> {
  let prev = read();
  let since = Date.now();
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    await Bun.sleep(100);
    const v = read();
    if (v !== prev) {
      prev = v;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return;
  }
}

function floeCommand(bin: string): string[] {
  return Bun.file(bin).size > 0 ? [bin] : [process.execPath, join(ROOT, "cli.ts")];
}

function fileText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function lines(path: string): number {
  const t = fileText(path);
  let n = 0;
  for (let i = t.indexOf("\n"); i >= 0; i = t.indexOf("\n", i + 1)) n++;
  return n;
}

export interface BurstOptions {
  messages: number;
  bin: string;
  env?: Record<string, string>;
  sub?: boolean;
}

/** One run: fresh broker, floe and mosquitto_sub subscribed, the burst, both counted. */
export async function burstOnce(run: number, o: BurstOptions): Promise<BurstRun> {
  const dir = mkdtempSync(join(tmpdir(), "floe-qos1-burst-"));
  const broker = await Mosquitto.start([], { defaults: true });
  const procs: Subprocess[] = [];
  try {
    const rule = join(dir, "rule.sql");
    writeFileSync(rule, `CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="${TOPIC}", FORMAT="json");\nSELECT * FROM s\n`);
    const floeOut = join(dir, "floe.out");
    const floeErr = join(dir, "floe.err");
    const floe = Bun.spawn([...floeCommand(o.bin), "run", rule], {
      cwd: dir,
      env: { ...process.env, MQTT_SOURCE__DEFAULT__SERVER: broker.url, MQTT_SOURCE__DEFAULT__QOS: "1", ...o.env },
      stdout: Bun.file(floeOut),
      stderr: Bun.file(floeErr),
    });
    procs.push(floe);
    const subOut = join(dir, "sub.out");
    if (o.sub !== false) {
      procs.push(Bun.spawn(["mosquitto_sub", "-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", TOPIC], { stdout: Bun.file(subOut), stderr: "ignore" }));
    }
    // Both subscribed: a warm-up message (not part of the burst) reaches both.
    const warm = async () => {
      Bun.spawnSync(["mosquitto_pub", "-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", TOPIC, "-m", '{"warm":1}']);
    };
    await waitFor(
      "floe and mosquitto_sub to receive the warm-up message",
      async () => {
        if (floe.exitCode !== null) throw new Error(`floe exited ${floe.exitCode}: ${fileText(floeErr)}`);
        if (lines(floeOut) > 0 && (o.sub === false || lines(subOut) > 0)) return true;
        await warm();
        await Bun.sleep(200);
        return false;
      },
      20_000,
    );
    const input = join(dir, "burst.ndjson");
    let text = "";
    for (let i = 0; i < o.messages; i++) text += `{"i":${i}}\n`;
    writeFileSync(input, text);
    const t0 = performance.now();
    const pub = Bun.spawn(["mosquitto_pub", "-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", TOPIC, "-l"], { stdin: Bun.file(input), stdout: "ignore", stderr: "inherit" });
    await pub.exited;
    const publishS = (performance.now() - t0) / 1000;
    await settle(() => lines(floeOut) + (o.sub === false ? 0 : lines(subOut)), 2000, 60_000);
    const drops = broker.log().split("\n").filter((l) => l.includes("Outgoing messages are being dropped")).length;
    return {
      run,
      floe: tally(fileText(floeOut), o.messages),
      sub: o.sub === false ? null : tally(fileText(subOut), o.messages),
      broker_drops: drops,
      publish_s: Math.round(publishS * 100) / 100,
      load: loadavg()[0]!,
      floe_stderr: fileText(floeErr),
    };
  } finally {
    for (const p of procs) {
      p.kill("SIGTERM");
      await p.exited;
    }
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(broker.dir, { recursive: true, force: true });
  }
}

function fmt(t: Tally | null): string {
  return t ? `${String(t.received).padStart(6)} lost ${String(t.lost).padStart(5)} dup ${t.duplicates}` : "-";
}

if (import.meta.main) {
  const { values: a } = parseArgs({
    options: {
      runs: { type: "string", default: "20" },
      messages: { type: "string", default: "20000" },
      bin: { type: "string", default: DEFAULT_FLOE_BIN },
      env: { type: "string", multiple: true, default: [] },
      "no-sub": { type: "boolean" },
      json: { type: "string" },
    },
  });
  const env: Record<string, string> = {};
  for (const kv of a.env!) {
    const i = kv.indexOf("=");
    env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const o: BurstOptions = { messages: Number(a.messages), bin: a.bin!, env, sub: !a["no-sub"] };
  const runs: BurstRun[] = [];
  console.log(`QoS 1 burst: ${o.messages} messages × ${a.runs} runs, default mosquitto, floe ${o.bin} ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(" ")}; load ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  for (let i = 1; i <= Number(a.runs); i++) {
    const r = await burstOnce(i, o);
    runs.push(r);
    console.log(`run ${String(i).padStart(2)}: floe ${fmt(r.floe)} | mosquitto_sub ${fmt(r.sub)} | broker drop logs ${r.broker_drops} | publish ${r.publish_s} s | load ${r.load.toFixed(2)}`);
  }
  const sum = (f: (r: BurstRun) => Tally | null) => {
    const ts = runs.map(f).filter((t): t is Tally => t !== null);
    if (!ts.length) return "-";
    const lossy = ts.filter((t) => t.lost > 0).length;
    return `lost in ${lossy}/${ts.length} runs, ${ts.reduce((n, t) => n + t.lost, 0)} messages in all (worst ${Math.max(...ts.map((t) => t.lost))}), duplicates ${ts.reduce((n, t) => n + t.duplicates, 0)}`;
  };
  console.log(`floe:          ${sum((r) => r.floe)}`);
  console.log(`mosquitto_sub: ${sum((r) => r.sub)}`);
  if (a.json) writeFileSync(a.json, JSON.stringify({ messages: o.messages, env, bin: o.bin, runs: runs.map(({ floe_stderr: _, ...r }) => r) }, null, 2) + "\n");
  process.exit(runs.some((r) => r.floe.lost > 0) ? 1 : 0);
}
