/**
 * Messages per socket read of the lean MQTT reader, and its CPU per message, with no engine behind
 * it (W3): a bounded broker of the harness, the generator, and a reader process pinned
 * to CPU 1 that only counts. `--root` runs the reader of another checkout (a base build's tree),
 * so that two readers can be alternated: A B A B …
 *
 *   node_modules/.bin/bun bench/reads.ts w3 [--rate 20000] [--seconds 10] [--runs 3] [--root /path/to/base]
 *
 * A QoS 1 workload (w1-qos1) is published and subscribed at QoS 1: the reader writes PUBACKs.
 *
 * Per run: messages delivered (fewer than sent: the broker's bounded queue dropped the rest while the
 * reader lagged), admitted batches (one per read), messages per read, µs CPU per delivered message.
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { startBroker } from "./broker.ts";
import { Generator } from "./gen.ts";
import { pinned } from "./meter.ts";
import { WORKLOADS, type WorkloadId } from "./workloads.ts";

const ROOT = join(import.meta.dir, "..");

async function reader(root: string, port: string, sub: string, qos: 0 | 1): Promise<void> {
  const { MqttConnection } = (await import(join(root, "lib/connectors/mqtt/client.ts"))) as typeof import("../lib/connectors/mqtt/client.ts");
  const { parseMqttConf } = (await import(join(root, "lib/connectors/mqtt/conf.ts"))) as typeof import("../lib/connectors/mqtt/conf.ts");
  let reads = 0;
  let msgs = 0;
  const handler = {
    maxBatch: 1024,
    admit(_p: unknown, from: number, to: number) {
      reads++;
      msgs += to - from;
      return true;
    },
    onDrain() {},
  };
  const conf = parseMqttConf({ server: `tcp://127.0.0.1:${port}`, protocolVersion: "5" }, { defaultClientId: `reads-${process.pid}` });
  const conn = new MqttConnection({ conf, handler, reader: "lean", log: (l: string) => console.error(l) });
  await conn.subscribe([sub], qos);
  let c0 = process.cpuUsage();
  process.on("SIGUSR1", () => {
    c0 = process.cpuUsage();
    reads = msgs = 0;
  });
  // The end of the send: messages not yet read then are the harness's end-of-send gap.
  process.on("SIGUSR2", () => console.log(JSON.stringify({ atEnd: msgs })));
  process.on("SIGTERM", () => {
    const c = process.cpuUsage(c0);
    console.log(JSON.stringify({ reads, msgs, cpu_us: c.user + c.system }));
    process.exit(0);
  });
  console.log("ready");
}

const { values: a, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rate: { type: "string", default: "20000" },
    seconds: { type: "string", default: "10" },
    runs: { type: "string", default: "3" },
    root: { type: "string" },
    "reader-of": { type: "string" },
    port: { type: "string" },
    qos: { type: "string", default: "0" },
  },
});

if (a["reader-of"]) await reader(a["reader-of"], a.port!, positionals[0]!, a.qos === "1" ? 1 : 0);
else {
  const w = WORKLOADS[(positionals[0] ?? "w3") as WorkloadId];
  const rate = Number(a.rate);
  const roots = a.root ? [resolve(a.root), ROOT] : [ROOT];
  for (let run = 0; run < Number(a.runs); run++) {
    for (const root of roots) {
      const broker = await startBroker(0);
      const p = Bun.spawn([...pinned(1), process.execPath, import.meta.path, w.subscription, "--reader-of", root, "--port", String(broker.port), "--qos", String(w.qos)], { stdout: "pipe", stderr: "inherit" });
      const out = p.stdout.getReader();
      await out.read();
      const gen = await Generator.open(broker.port, 8);
      await gen.run(w, "warm", 2000, 0.5);
      await Bun.sleep(500);
      p.kill("SIGUSR1");
      await Bun.sleep(100);
      const g = await gen.run(w, "run", rate, Number(a.seconds));
      p.kill("SIGUSR2");
      await Bun.sleep(1500);
      p.kill("SIGTERM");
      const lines: string[] = [];
      for (;;) {
        const c = await out.read();
        if (c.done) break;
        lines.push(...new TextDecoder().decode(c.value).split("\n").filter((l) => l));
      }
      const atEnd = (JSON.parse(lines.find((l) => l.includes("atEnd"))!) as { atEnd: number }).atEnd;
      const r = JSON.parse(lines.find((l) => l.includes("reads"))!) as { reads: number; msgs: number; cpu_us: number };
      gen.close();
      await broker.stop();
      const perRead = (r.msgs / r.reads).toFixed(1);
      console.log(`${root === ROOT ? "this" : "base"} ${w.id} ${rate}/s: delivered ${r.msgs} of ${g.sent} (${g.sent - atEnd} unread at the end of the send), ${r.reads} reads, ${perRead} msg/read, ${(r.cpu_us / r.msgs).toFixed(2)} µs/msg`);
    }
  }
}
