/**
 * W1 (telemetry filter) over a real broker, per bench.md: a dedicated Mosquitto with bounded
 * queues, an open-loop generator (8 connections, pre-encoded QoS 0 PUBLISH frames, everything due
 * written once per millisecond), the engine (`floe run`, stdout to a file) pinned to CPU 1, the
 * broker and generator to CPU 0. Measures engine CPU (utime+stime from /proc) per message, peak
 * RSS/anon, and proves the output exact (the expected id set, no duplicates, no extras).
 *
 *   bun bench/mqtt-w1.ts [--rate 20000] [--seconds 20] [--reader lean|mqttjs|both] [--runs 1]
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    rate: { type: "string", default: "20000" },
    seconds: { type: "string", default: "20" },
    reader: { type: "string", default: "both" },
    runs: { type: "string", default: "1" },
    conns: { type: "string", default: "8" },
  },
});
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const CONNS = Number(args.conns);
const DEVICES = 1000;
const root = join(import.meta.dir, "..");
const dir = mkdtempSync(join(tmpdir(), "floe-bench-"));

function taskset(cpu: number): string[] {
  return Bun.which("taskset") ? ["taskset", "-c", String(cpu)] : [];
}

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const p = s.port;
  s.stop(true);
  return p;
}

async function startBroker(): Promise<{ port: number; stop(): void }> {
  const port = await freePort();
  const conf = join(dir, "mosquitto.conf");
  writeFileSync(
    conf,
    [`listener ${port} 127.0.0.1`, "allow_anonymous true", "max_queued_messages 4096", "max_queued_bytes 1048576", "persistence false", "max_inflight_messages 0", ""].join("\n"),
  );
  const mosq = Bun.which("mosquitto") ?? "/usr/sbin/mosquitto";
  const p = Bun.spawn([...taskset(0), mosq, "-c", conf], { stdout: "ignore", stderr: "ignore" });
  await Bun.sleep(300);
  return { port, stop: () => p.kill() };
}

// ---------------------------------------------------------------------------------------------
// Generator: raw MQTT 3.1.1 over node:net, QoS 0.

function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 128;
    out.push(b);
  } while (n > 0);
  return out;
}

function publishFrame(topic: string, payload: string): Buffer {
  const t = Buffer.from(topic);
  const p = Buffer.from(payload);
  const rem = 2 + t.length + p.length;
  return Buffer.concat([Buffer.from([0x30, ...varint(rem), t.length >> 8, t.length & 255]), t, p]);
}

function connectFrame(id: string): Buffer {
  const cid = Buffer.from(id);
  const vh = Buffer.from([0, 4, 77, 81, 84, 84, 4, 2, 0, 60]);
  const rem = vh.length + 2 + cid.length;
  return Buffer.concat([Buffer.from([0x10, ...varint(rem)]), vh, Buffer.from([cid.length >> 8, cid.length & 255]), cid]);
}

function payload(tag: string, c: number, k: number, ts: number): string {
  const temp = (20 + (k % 150) / 10).toFixed(1);
  const speed = ((k % 1300) / 10).toFixed(1);
  return `{"id":"${tag}_${c}_${k}","device":"dev_${(k * CONNS + c) % DEVICES}","temp":${temp},"speed":${speed},"ts":${ts}}`;
}

async function openConns(port: number, n: number): Promise<Socket[]> {
  return Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise<Socket>((resolve, reject) => {
          const s = connect({ host: "127.0.0.1", port }, () => {
            s.write(connectFrame(`gen-${i}-${Date.now()}`));
            resolve(s);
          });
          s.on("data", () => {});
          s.on("error", reject);
        }),
    ),
  );
}

/** Open loop: message k of connection c is due at start + k / perConn; writes everything due each ms. */
async function generate(socks: Socket[], tag: string, rate: number, seconds: number): Promise<{ sent: number; nominal: number; wall: number; perSecond: number[] }> {
  const perConn = rate / socks.length;
  const total = Math.round(perConn * seconds);
  const sent = new Array<number>(socks.length).fill(0);
  const start = performance.now();
  const epoch = Date.now();
  const perSecond: number[] = [];
  for (;;) {
    const el = performance.now() - start;
    let done = true;
    for (let c = 0; c < socks.length; c++) {
      const due = Math.min(total, Math.floor((el / 1000) * perConn));
      if (due < total) done = false;
      if (due <= sent[c]!) continue;
      const frames: Buffer[] = [];
      for (let k = sent[c]!; k < due; k++) frames.push(publishFrame("bench/telemetry", payload(tag, c, k, Math.round(epoch + (k / perConn) * 1000))));
      socks[c]!.write(Buffer.concat(frames));
      const sec = Math.floor(el / 1000);
      perSecond[sec] = (perSecond[sec] ?? 0) + (due - sent[c]!);
      sent[c] = due;
    }
    if (done) break;
    await Bun.sleep(1);
  }
  const wall = (performance.now() - start) / 1000;
  return { sent: sent.reduce((a, b) => a + b, 0), nominal: total * socks.length, wall, perSecond };
}

// ---------------------------------------------------------------------------------------------

function cpuTicks(pid: number): number {
  const f = require("node:fs").readFileSync(`/proc/${pid}/stat`, "utf8") as string;
  const parts = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return Number(parts[11]) + Number(parts[12]);
}

function memKb(pid: number): { rss: number; anon: number } {
  const s = require("node:fs").readFileSync(`/proc/${pid}/status`, "utf8") as string;
  const get = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0);
  return { rss: get("VmRSS"), anon: get("RssAnon") };
}

async function lines(path: string): Promise<string[]> {
  const t = await Bun.file(path).text().catch(() => "");
  return t ? t.split("\n").filter((l) => l) : [];
}

async function runOnce(reader: string): Promise<Record<string, unknown>> {
  const broker = await startBroker();
  const rule = join(dir, "w1.sql");
  writeFileSync(
    rule,
    `CREATE STREAM telem () WITH (TYPE="mqtt", DATASOURCE="bench/telemetry", CONF_KEY="bench");
     SELECT id, device, temp, speed * 3.6 AS speed_kmh FROM telem WHERE temp > 21.0`,
  );
  const out = join(dir, `out-${reader}.ndjson`);
  // FLOE_BENCH_PROF=<dir>: write a CPU profile of the engine there.
  const prof = process.env.FLOE_BENCH_PROF ? ["--cpu-prof", "--cpu-prof-dir", process.env.FLOE_BENCH_PROF] : [];
  const engine = Bun.spawn([...taskset(1), process.execPath, ...prof, join(root, "cli.ts"), "run", rule], {
    env: { ...process.env, MQTT_SOURCE__BENCH__SERVER: `tcp://127.0.0.1:${broker.port}`, MQTT_SOURCE__BENCH__QOS: "0", FLOE_MQTT_READER: reader },
    stdin: "ignore",
    stdout: Bun.file(out),
    stderr: "inherit",
  });
  const socks = await openConns(broker.port, CONNS);
  // Warm-up: a burst with its own tag until it shows in the output (the subscription is live).
  for (let i = 0; i < 50; i++) {
    await generate(socks, "warm", 2000, 0.05);
    await Bun.sleep(100);
    if ((await lines(out)).some((l) => l.includes('"warm_'))) break;
  }
  await Bun.sleep(300);
  const warmLines = (await lines(out)).length;
  const pid = engine.pid;
  let peak = { rss: 0, anon: 0 };
  const sampler = setInterval(() => {
    const m = memKb(pid);
    peak = { rss: Math.max(peak.rss, m.rss), anon: Math.max(peak.anon, m.anon) };
  }, 250);
  const c0 = cpuTicks(pid);
  const gen = await generate(socks, "run", RATE, SECONDS);
  const atEnd = (await lines(out)).length - warmLines;
  // Let the engine finish what is in flight, then stop measuring.
  let prev = -1;
  for (;;) {
    await Bun.sleep(500);
    const n = (await lines(out)).length;
    if (n === prev) break;
    prev = n;
  }
  const c1 = cpuTicks(pid);
  clearInterval(sampler);
  engine.kill("SIGINT");
  await engine.exited;
  for (const s of socks) s.destroy();
  broker.stop();
  // Exact proof: the ids with temp > 21.0, each once.
  const perConn = Math.round((RATE / CONNS) * SECONDS);
  const want = new Set<string>();
  for (let c = 0; c < CONNS; c++) for (let k = 0; k < perConn; k++) if (k % 150 > 10) want.add(`run_${c}_${k}`);
  const got = (await lines(out)).map((l) => (JSON.parse(l) as { id: string }).id).filter((id) => id.startsWith("run_"));
  const gotSet = new Set(got);
  let missing = 0;
  for (const id of want) if (!gotSet.has(id)) missing++;
  const extras = [...gotSet].filter((id) => !want.has(id)).length;
  const cpuSec = (c1 - c0) / 100;
  const interior = gen.perSecond.slice(1, -1);
  const onSchedule = gen.sent === gen.nominal && gen.wall <= SECONDS + 1.5 && interior.every((n) => n >= RATE * 0.95 && n <= RATE * 1.1);
  return {
    reader,
    rate: RATE,
    seconds: SECONDS,
    sent: gen.sent,
    on_schedule: onSchedule,
    expected_out: want.size,
    out: got.length,
    lost: missing,
    duplicates: got.length - gotSet.size,
    extras,
    output_gap_at_end_of_send: want.size - Math.min(want.size, atEnd),
    cpu_s: cpuSec,
    cpu_pct: Math.round((cpuSec / gen.wall) * 1000) / 10,
    us_per_msg: Math.round((cpuSec * 1e6 * 100) / gen.sent) / 100,
    peak_rss_mib: Math.round(peak.rss / 102.4) / 10,
    peak_anon_mib: Math.round(peak.anon / 102.4) / 10,
  };
}

const readers = args.reader === "both" ? ["lean", "mqttjs"] : [args.reader!];
const results: Record<string, unknown>[] = [];
for (let r = 0; r < Number(args.runs); r++) for (const reader of readers) results.push(await runOnce(reader));
console.log(JSON.stringify(results, null, 2));
