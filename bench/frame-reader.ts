/**
 * The lean MQTT reader's own cost (lib/connectors/mqtt/frames.ts) over a W1 byte stream: QoS 0
 * PUBLISH frames on `bench/telemetry` with W1's payloads, cut into socket reads of `--read` bytes
 * (frames split across reads as the socket splits them), each read a fresh buffer as the socket
 * gives. Prints ns and bytes allocated per message for this tree and, with `--root`, another
 * checkout's reader, alternated (A B A B), each in a child process of its own. Bytes allocated are
 * what JSC's collector counted (`BUN_JSC_logGC=1`: the bytes each collection was requested after,
 * summed; Buffer storage included), ÷ messages.
 *
 *   node_modules/.bin/bun bench/frame-reader.ts [--root /path/to/base] [--messages 2000000] [--read 16384] [--rounds 2]
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values: a } = parseArgs({
  options: { root: { type: "string" }, messages: { type: "string" }, read: { type: "string" }, rounds: { type: "string" }, child: { type: "string" } },
});
const N = Number(a.messages ?? 2_000_000);
const READ = Number(a.read ?? 16_384);

/** W1's frames (bench/workloads.ts: device round-robin over 1,000, temp and speed from k), 10,000 of them, repeated. */
function stream(): Buffer {
  const frames: Buffer[] = [];
  const topic = Buffer.from("bench/telemetry");
  for (let k = 0; k < 10_000; k++) {
    const payload = Buffer.from(`{"id":"w1_0_${k}","device":"dev_${k % 1000}","temp":${20 + (k % 150) / 10},"speed":${(k % 1300) / 10}}`);
    const len = 2 + topic.length + payload.length;
    const head = len < 128 ? Buffer.from([0x30, len]) : Buffer.from([0x30, (len & 127) | 128, len >> 7]);
    frames.push(head, Buffer.from([0, topic.length]), topic, payload);
  }
  return Buffer.concat(frames);
}

async function child(root: string): Promise<void> {
  const mod = await import(join(root, "lib/connectors/mqtt/frames.ts"));
  // A checkout before `Publishes` appends new `Publish` objects to an array.
  const list = mod.Publishes ? new mod.Publishes() : null;
  const arr: { payload: Uint8Array }[] = [];
  const pubs = list ?? arr;
  const items: { payload: Uint8Array }[] = list ? list.items : arr;
  const bytes = stream();
  // The reads, cut in advance; each pass copies them into fresh buffers as the socket would.
  const reads: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += READ) reads.push(bytes.subarray(i, i + READ));
  const reader = new mod.FrameReader(false);
  let msgs = 0;
  let sink = 0;
  const pass = (): void => {
    for (const r of reads) {
      reader.read(Buffer.from(r), pubs);
      const n = pubs.length;
      msgs += n;
      sink += n && items[n - 1]!.payload.length;
      if (list) list.clear();
      else arr.length = 0;
    }
  };
  while (msgs < 200_000) pass();
  // Copying the reads is the socket's cost, not the reader's: measured alone and taken off.
  const copies = (): void => {
    for (const r of reads) sink += Buffer.from(r).length & 1;
  };
  console.error("MEASURE");
  msgs = 0;
  const t0 = Bun.nanoseconds();
  while (msgs < N) pass();
  const ns = Bun.nanoseconds() - t0;
  const passes = msgs / 10_000;
  console.error("COPIES");
  const t1 = Bun.nanoseconds();
  for (let p = 0; p < passes; p++) copies();
  const copyNs = Bun.nanoseconds() - t1;
  console.error("END");
  console.log(JSON.stringify({ msgs, ns, copyNs, sink }));
}

async function run(root: string): Promise<{ nsPerMsg: number; bPerMsg: number; copyBPerMsg: number }> {
  const p = Bun.spawn([process.execPath, import.meta.path, "--child", root, "--messages", String(N), "--read", String(READ)], {
    env: { ...process.env, BUN_JSC_logGC: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const r = JSON.parse(out) as { msgs: number; ns: number; copyNs: number };
  // Bytes each collection was requested after, summed per phase.
  const phase: Record<string, number> = {};
  let at = "warm";
  for (const line of err.split("\n")) {
    if (line === "MEASURE" || line === "COPIES" || line === "END") at = line;
    const m = /bytes allocated this cycle: (\d+)/.exec(line);
    if (m) phase[at] = (phase[at] ?? 0) + Number(m[1]);
  }
  const copyB = (phase.COPIES ?? 0) / r.msgs;
  return { nsPerMsg: (r.ns - r.copyNs) / r.msgs, bPerMsg: (phase.MEASURE ?? 0) / r.msgs - copyB, copyBPerMsg: copyB };
}

if (a.child) await child(a.child);
else {
  const here = resolve(join(import.meta.dir, ".."));
  const builds = a.root ? [["base", resolve(a.root)], ["new", here]] : [["this", here]];
  for (let round = 0; round < Number(a.rounds ?? 2); round++)
    for (const [name, root] of builds) {
      const r = await run(root!);
      console.log(`${name}: ${r.nsPerMsg.toFixed(1)} ns/msg, ${r.bPerMsg.toFixed(0)} B/msg allocated by the reader (the read's own copy: ${r.copyBPerMsg.toFixed(0)} B/msg, not counted)`);
    }
}
