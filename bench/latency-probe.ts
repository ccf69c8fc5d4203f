/**
 * The latency probe (bench/latency.ts): a raw MQTT 3.1.1 subscriber at QoS 0 on the bench broker.
 * Each socket read is stamped once (`monoMs`, also used as the wall clock of window rows)
 * before its packets are parsed, as a client that hands messages on at once would see them.
 *   - `--in TOPIC`: the workload's input subscription — the plain subscriber; ids `${tag}_c_k` recorded.
 *   - `--out TOPIC`: floe's MQTT sink topic; each payload is written as a line to `--file` (the
 *     step's exact proof reads it) and its id, or for rows without one its wall-clock arrival, recorded.
 * On a line `end` on stdin it writes `in.f64`, `out.f64` (triplets c, k, ms) and `win.f64` (epoch ms)
 * into `--arrivals DIR` and answers `done`. It prints `ready` once subscribed.
 *
 *   bun bench/latency-probe.ts --port P --out bench/out [--in bench/telemetry] --file OUT --arrivals DIR [--tag run]
 */
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { LineWriter } from "./floor.ts";
import { connectFrame, subscribeFrame } from "./gen.ts";
import { idOf, monoMs } from "./latency.ts";

/** A growable list of doubles. */
class F64List {
  private a = new Float64Array(1 << 16);
  n = 0;
  push(x: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = x;
  }
  view(): Float64Array {
    return this.a.subarray(0, this.n);
  }
}

/** Splits a byte stream into MQTT packets; `publish` gets each PUBLISH's topic and payload. */
export class PacketSplitter {
  private rest: Buffer | null = null;
  constructor(private readonly publish: (topic: string, payload: Buffer) => void, private readonly other: (type: number) => void = () => {}) {}

  push(chunk: Buffer): void {
    const b: Buffer = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    let o = 0;
    for (;;) {
      if (o + 2 > b.length) break;
      let len = 0;
      let mul = 1;
      let i = o + 1;
      let ok = false;
      while (i < b.length && i < o + 5) {
        const x = b[i++]!;
        len += (x & 127) * mul;
        mul *= 128;
        if ((x & 128) === 0) {
          ok = true;
          break;
        }
      }
      if (!ok || i + len > b.length) break;
      const type = b[o]! >> 4;
      if (type === 3) {
        const tl = (b[i]! << 8) | b[i + 1]!;
        const topic = b.toString("latin1", i + 2, i + 2 + tl);
        const qos = (b[o]! >> 1) & 3;
        const from = i + 2 + tl + (qos > 0 ? 2 : 0);
        this.publish(topic, b.subarray(from, i + len));
      } else this.other(type);
      o = i + len;
    }
    this.rest = o < b.length ? Buffer.from(b.subarray(o)) : null;
  }
}

if (import.meta.main) {
  const { values: a } = parseArgs({ options: { port: { type: "string" }, in: { type: "string" }, out: { type: "string" }, file: { type: "string" }, arrivals: { type: "string" }, tag: { type: "string", default: "run" } } });
  if (!a.port || !a.out || !a.file || !a.arrivals) throw new Error("usage: bun bench/latency-probe.ts --port P --out TOPIC [--in TOPIC] --file OUT --arrivals DIR");
  const fd = openSync(a.file, "w");
  const lines = new LineWriter(fd);
  const inArr = new F64List();
  const outArr = new F64List();
  const winArr = new F64List();
  const tag = a.tag!;
  let now = 0;
  let wall = 0;
  const record = (list: F64List, payload: string): boolean => {
    const id = idOf(payload, tag);
    if (!id) return false;
    list.push(id[0]);
    list.push(id[1]);
    list.push(now);
    return true;
  };
  const outTopic = a.out;
  let acks = 0;
  const topics = [outTopic, ...(a.in ? [a.in] : [])];
  const split = new PacketSplitter(
    (topic, payload) => {
      const text = payload.toString("latin1");
      if (topic !== outTopic) {
        record(inArr, text);
        return;
      }
      lines.line(text);
      if (!record(outArr, text) && !text.includes('"device":"warm_')) winArr.push(wall);
    },
    (type) => {
      if (type === 9 && ++acks === topics.length) console.log("ready");
    },
  );
  const s = await Bun.connect({
    hostname: "127.0.0.1",
    port: Number(a.port),
    socket: {
      data: (_s, d) => {
        now = wall = monoMs();
        split.push(d);
      },
    },
  });
  s.write(connectFrame(`floe-latency-probe-${process.pid}`));
  topics.forEach((t, i) => s.write(subscribeFrame(t, i + 1)));
  for await (const line of console) {
    if (line.trim() !== "end") continue;
    lines.flush();
    closeSync(fd);
    await Bun.write(join(a.arrivals, "in.f64"), inArr.view());
    await Bun.write(join(a.arrivals, "out.f64"), outArr.view());
    await Bun.write(join(a.arrivals, "win.f64"), winArr.view());
    console.log("done");
    break;
  }
  s.end();
  process.exit(0);
}
