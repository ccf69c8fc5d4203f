/**
 * The floor engine of the harness: W1–W5 written by hand on the same lean MQTT reader
 * floe's sources use (lib/connectors/mqtt: MQTT.js for the handshake, frames.ts for the data path), with no
 * SQL, no planner and no bus, writing the same NDJSON lines the verifier proves. It is what this
 * runtime costs for the workload itself, so every RESULTS.md row can show floe / floor.
 *
 * The hand-written loops are what a careful programmer would write, not tricks floe cannot use:
 * `JSON.parse` of each payload, a `Map` per device for windows, `JSON.stringify` of each output
 * row, lines gathered and written once per tick (or every 64 KiB) like floe's file sink. Windows
 * follow the rules' semantics as far as the proof can see: W2/W4 tumble every 10 s aligned to the
 * wall clock; W5 closes its session at the aligned 10 s tick or after 2 s without a message.
 *
 *   bun bench/floor.ts --workload w1 --broker PORT --out FILE --http PORT
 * GET /status on the http port answers {"in": records read, "out": rows written, "exceptions": 0};
 * GET /metrics answers the event-loop lag histogram in floe's metric name (the same probe).
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { parseArgs } from "node:util";
import { MqttConnection, type PublishHandler } from "../lib/connectors/mqtt/client.ts";
import { parseMqttConf } from "../lib/connectors/mqtt/conf.ts";
import type { Publish } from "../lib/connectors/mqtt/frames.ts";
import { LAG_BUCKETS, loopLag } from "../lib/runtime/loop-lag.ts";
import { WORKLOADS, type WorkloadId } from "./workloads.ts";

/** Output lines gathered as strings and written once per tick or every 64 KiB (as floe's file sink). */
export class LineWriter {
  private parts: string[] = [];
  private len = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  rows = 0;
  constructor(private readonly fd: number) {}

  line(s: string): void {
    this.parts.push(s, "\n");
    this.len += s.length + 1;
    this.rows++;
    if (this.len >= 65536) this.flush();
    else this.timer ??= setTimeout(this.flush, 0);
  }

  readonly flush = (): void => {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.len) return;
    writeSync(this.fd, this.parts.join(""));
    this.parts = [];
    this.len = 0;
  };
}

interface Acc {
  n: number;
  sum: number;
  max: number;
}

/** One workload's hand-written loop: `msg` per publish, `flush` when a window closes (null: no window). */
export interface FloorLoop {
  msg(p: Publish): void;
  flush?(): void;
}

const dec = new TextDecoder();

export function floorLoop(workload: WorkloadId, out: LineWriter): FloorLoop {
  const id = WORKLOADS[workload].base;
  switch (id) {
    case "w1":
      return {
        msg(p) {
          const r = JSON.parse(dec.decode(p.payload));
          if (r.temp > 21.0) out.line(JSON.stringify({ id: r.id, device: r.device, temp: r.temp, speed_kmh: r.speed * 3.6 }));
        },
      };
    case "w3":
      return {
        msg(p) {
          out.line(JSON.stringify({ topic: p.topic, state: Buffer.from(p.payload.buffer, p.payload.byteOffset, p.payload.length).toString("base64") }));
        },
      };
    default: {
      // W2: count, avg(temp), max(speed); W4: count, avg(speed), max(temp); W5: count, max(speed).
      const groups = new Map<string, Acc>();
      const avgKey = id === "w4" ? "speed" : "temp";
      const maxKey = id === "w4" ? "temp" : "speed";
      return {
        msg(p) {
          const r = JSON.parse(dec.decode(p.payload));
          let a = groups.get(r.device);
          if (a === undefined) groups.set(r.device, (a = { n: 0, sum: 0, max: -Infinity }));
          a.n++;
          a.sum += r[avgKey];
          const m = r[maxKey];
          if (m > a.max) a.max = m;
        },
        flush() {
          for (const [device, a] of groups) {
            if (id === "w2") out.line(JSON.stringify({ device, n: a.n, avg_temp: a.sum / a.n, max_speed: a.max }));
            else if (id === "w4") out.line(JSON.stringify({ device, n: a.n, avg_speed: a.sum / a.n, max_temp: a.max }));
            else out.line(JSON.stringify({ device, n: a.n, max_power: a.max }));
          }
          groups.clear();
        },
      };
    }
  }
}

function lagMetrics(): string {
  const lines = ["# TYPE floe_event_loop_lag_seconds histogram"];
  let cum = 0;
  LAG_BUCKETS.forEach((b, i) => {
    cum += loopLag.counts[i]!;
    lines.push(`floe_event_loop_lag_seconds_bucket{le="${b}"} ${cum}`);
  });
  cum += loopLag.counts[LAG_BUCKETS.length]!;
  lines.push(`floe_event_loop_lag_seconds_bucket{le="+Inf"} ${cum}`, `floe_event_loop_lag_seconds_count ${loopLag.count}`);
  return lines.join("\n") + "\n";
}

if (import.meta.main) {
  const { values: a } = parseArgs({ options: { workload: { type: "string" }, broker: { type: "string" }, out: { type: "string" }, http: { type: "string" } } });
  const w = WORKLOADS[a.workload as WorkloadId];
  if (!w || !a.broker || !a.out || !a.http) throw new Error("usage: bun bench/floor.ts --workload wN --broker PORT --out FILE --http PORT");
  const fd = openSync(a.out, "w");
  const out = new LineWriter(fd);
  const loop = floorLoop(w.id, out);
  let records = 0;
  let last = 0;
  const handler: PublishHandler = {
    maxBatch: 1024,
    admit(pubs, from, to) {
      for (let i = from; i < to; i++) loop.msg(pubs[i]!);
      records += to - from;
      return true;
    },
    onDrain() {},
  };
  if (loop.flush) {
    const flush = loop.flush;
    const tick = () => {
      flush();
      setTimeout(tick, 10_000 - (Date.now() % 10_000));
    };
    setTimeout(tick, 10_000 - (Date.now() % 10_000));
    if (w.id === "w5") {
      // The session's 2 s timeout: checked every 250 ms instead of rearming a timer per message.
      let seen = 0;
      setInterval(() => {
        if (records !== seen) {
          seen = records;
          last = Date.now();
        } else if (last && Date.now() - last >= 2000) {
          last = 0;
          flush();
        }
      }, 250);
    }
  }
  loopLag.start();
  Bun.serve({
    port: Number(a.http),
    hostname: "127.0.0.1",
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/metrics") return new Response(lagMetrics());
      out.flush();
      return Response.json({ in: records, out: out.rows, exceptions: 0 });
    },
  });
  const conf = parseMqttConf({ server: `tcp://127.0.0.1:${a.broker}`, protocolVersion: "5" }, { defaultClientId: `floor-${process.pid}` });
  const conn = new MqttConnection({ conf, handler, reader: "lean", log: (l) => console.error(l) });
  await conn.subscribe([w.subscription], w.qos);
  console.error(`floor ${w.id}: subscribed to ${w.subscription}`);
  const stop = async () => {
    out.flush();
    closeSync(fd);
    await conn.close();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
