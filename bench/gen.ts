/**
 * The open-loop MQTT 3.1.1 generator (QoS 0; QoS 1 for a QoS 1 workload, PUBACKs not awaited) of bench.md §Method 3–4. A few connections (default 8),
 * each carrying every `conns`-th message of the device round-robin, as a gateway does. Message k
 * of connection c is due at start + k / rate_per_connection; every millisecond each connection
 * gets everything that is due in one socket write, and nothing ever waits for the consumer. The
 * constant parts of each frame (topic header, device, temp/speed text) are encoded once; the
 * varying id and ts digits are written straight into a reused buffer.
 *
 *   bun bench/gen.ts --port P --rate 20000 --seconds 20 [--workload w1] [--conns 8] [--tag run]
 *   bun bench/gen.ts --ceiling [--rates 50000,100000,120000,150000] [--seconds 20]
 *       its own bounded broker, the generator on CPU 0, a minimal counting subscriber on CPU 1 (meter.ts CPUS)
 *   bun bench/gen.ts --count PORT TOPIC   (the counting subscriber: prints "count N" every 100 ms)
 */
import type { Socket } from "bun";
import { parseArgs } from "node:util";
import { monoMs } from "./latency.ts";
import { WORKLOADS, type Workload, type WorkloadId } from "./workloads.ts";

export interface GenResult {
  tag: string;
  rate: number;
  seconds: number;
  conns: number;
  nominal: number;
  sent: number;
  /** Messages sent on each connection (message k of connection c has id `${tag}_${c}_${k}`). */
  sent_per_conn: number[];
  errors: number;
  /** From the first due message to the last byte handed to the kernel. */
  wall_s: number;
  /** Messages written in each second since the start. */
  per_second: number[];
  /** Largest backlog the generator held because a socket would not take more (bytes). */
  pending_max_bytes: number;
  on_schedule: boolean;
  /** Why on_schedule is false (empty when it is true). */
  why: string[];
  started_at: number;
}

export interface RunOptions {
  /** Device names are `${devicePrefix}${n}` (default `dev_`; the warm-up uses `warm_`). */
  devicePrefix?: string;
  /** Device count (default: the workload's). */
  devices?: number;
  /** Called after each write tick with the total sent so far (cheap; for end-of-send sampling). */
  onTick?: (sent: number) => void;
  /** Called after each socket write of connection c: its messages before `end` have been written (at `t`, monoMs). */
  onWrite?: (c: number, end: number, t: number) => void;
}

const MAX_FRAME = 320;

function varintInto(buf: Buffer, o: number, n: number): number {
  do {
    let b = n & 127;
    n >>>= 7;
    if (n > 0) b |= 128;
    buf[o++] = b;
  } while (n > 0);
  return o;
}

function frame(type: number, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head[0] = type;
  const end = varintInto(head, 1, body.length);
  return Buffer.concat([head.subarray(0, end), body]);
}

function str(s: string): Buffer {
  const b = Buffer.from(s);
  return Buffer.concat([Buffer.from([b.length >> 8, b.length & 255]), b]);
}

/** CONNECT, MQTT 3.1.1, clean session, keep-alive off (the publisher never idles long). */
export function connectFrame(clientId: string): Buffer {
  return frame(0x10, Buffer.concat([str("MQTT"), Buffer.from([4, 2, 0, 0]), str(clientId)]));
}

export function subscribeFrame(topic: string, id = 1): Buffer {
  return frame(0x82, Buffer.concat([Buffer.from([id >> 8, id & 255]), str(topic), Buffer.from([0])]));
}

/** Decimal text of temp and speed, computed once: 20.0 + i / 10 and i / 10 as JavaScript prints them. */
const TEMPS = Array.from({ length: 150 }, (_, i) => String(20.0 + i / 10));
const SPEEDS = Array.from({ length: 1300 }, (_, i) => String(i / 10));

class Conn {
  pending: Buffer | null = null;
  errors = 0;
  closed = false;
  private acked!: () => void;
  readonly ready = new Promise<void>((r) => (this.acked = r));
  socket!: Socket<undefined>;

  static async open(host: string, port: number, id: string): Promise<Conn> {
    const c = new Conn();
    c.socket = await Bun.connect({
      hostname: host,
      port,
      socket: {
        data: (_s, d) => {
          if (d[0] === 0x20) c.acked();
        },
        drain: () => c.flush(),
        close: () => {
          c.closed = true;
        },
        error: () => {
          c.errors++;
        },
      },
    });
    c.socket.write(connectFrame(id));
    await Promise.race([c.ready, Bun.sleep(5000).then(() => Promise.reject(new Error(`no CONNACK on port ${port}`)))]);
    return c;
  }

  /** Writes `data` (copied if the kernel does not take it all); one socket write. */
  send(data: Buffer): void {
    if (this.closed) {
      this.errors++;
      return;
    }
    if (this.pending) {
      this.pending = Buffer.concat([this.pending, data]);
      this.flush();
      return;
    }
    const n = this.socket.write(data);
    if (n < data.length) this.pending = Buffer.from(data.subarray(Math.max(0, n)));
  }

  flush(): void {
    if (!this.pending || this.closed) return;
    const n = this.socket.write(this.pending);
    this.pending = n >= this.pending.length ? null : this.pending.subarray(Math.max(0, n));
  }
}

/** Open connections to a broker, reused across steps. */
export class Generator {
  /** The last QoS 1 packet id of each connection. */
  private readonly packetIds: number[];

  private constructor(
    private readonly conns: Conn[],
    readonly host: string,
    readonly port: number,
  ) {
    this.packetIds = conns.map(() => 0);
  }

  static async open(port: number, conns = 8, host = "127.0.0.1"): Promise<Generator> {
    const tag = `${process.pid}-${Date.now()}`;
    const list = await Promise.all(Array.from({ length: conns }, (_, i) => Conn.open(host, port, `floe-gen-${tag}-${i}`)));
    return new Generator(list, host, port);
  }

  get connections(): number {
    return this.conns.length;
  }

  /** One open-loop step: `rate` msg/s in total for `seconds`, ids `${tag}_${conn}_${k}`. */
  async run(w: Workload, tag: string, rate: number, seconds: number, opts: RunOptions = {}): Promise<GenResult> {
    const C = this.conns.length;
    const devices = opts.devices ?? w.devices;
    const prefix = opts.devicePrefix ?? "dev_";
    const perConn = rate / C;
    const total = Math.round(perConn * seconds);
    // Constant parts, encoded once: per device its name and the topic header (length + bytes); a
    // subscription without wildcards is the one topic of every device (W2-1M: no million buffers).
    const names = Array.from({ length: devices }, (_, n) => `${prefix}${n}`);
    const sameTopic = !/[+#]/.test(w.subscription);
    const topicBufs = sameTopic ? [str(w.subscription)] : names.map((d) => str(w.topic(d)));
    // QoS 1: the PUBLISH header's QoS bits and a packet id after the topic (PUBACKs are not awaited).
    const qos1 = w.qos === 1;
    const pid = this.packetIds;
    const idHead = Array.from({ length: C }, (_, c) => `{"id":"${tag}_${c}_`);
    const devPart = names.map((d) => `","device":"${d}","temp":`);
    const json = w.payload === "json";
    const sent = new Array<number>(C).fill(0);
    const perSecond: number[] = [];
    let scratch = Buffer.allocUnsafe(MAX_FRAME * 1024);
    let pendingMax = 0;
    const errors0 = this.conns.reduce((a, c) => a + c.errors, 0);
    const epoch = Date.now();
    const start = performance.now();
    let sentTotal = 0;
    for (;;) {
      const el = performance.now() - start;
      let done = true;
      for (let c = 0; c < C; c++) {
        const due = Math.min(total, Math.floor((el / 1000) * perConn) + 1);
        if (due < total) done = false;
        const from = sent[c]!;
        if (due <= from) continue;
        const need = (due - from) * MAX_FRAME;
        if (scratch.length < need) scratch = Buffer.allocUnsafe(need * 2);
        let o = 0;
        for (let k = from; k < due; k++) {
          const d = (k * C + c) % devices;
          let pl: string;
          if (json) {
            const ts = Math.round(epoch + (k * 1000) / perConn);
            pl = idHead[c]! + k + devPart[d]! + TEMPS[k % 150]! + ',"speed":' + SPEEDS[k % 1300]! + ',"ts":' + ts + "}";
          } else {
            pl = TEMPS[k % 150]!;
          }
          const tb = sameTopic ? topicBufs[0]! : topicBufs[d]!;
          scratch[o++] = qos1 ? 0x32 : 0x30;
          o = varintInto(scratch, o, tb.length + pl.length + (qos1 ? 2 : 0));
          o += tb.copy(scratch, o);
          if (qos1) {
            const id = (pid[c] = (pid[c]! % 65535) + 1);
            scratch[o++] = id >> 8;
            scratch[o++] = id & 255;
          }
          o += scratch.write(pl, o, "latin1");
        }
        this.conns[c]!.send(scratch.subarray(0, o));
        opts.onWrite?.(c, due, monoMs());
        const p = this.conns[c]!.pending;
        if (p && p.length > pendingMax) pendingMax = p.length;
        const sec = Math.floor(el / 1000);
        perSecond[sec] = (perSecond[sec] ?? 0) + (due - from);
        sentTotal += due - from;
        sent[c] = due;
      }
      opts.onTick?.(sentTotal);
      if (done) break;
      await Bun.sleep(1);
    }
    // Whatever a socket refused is still ours to deliver: the wall ends when the kernel has it all.
    while (this.conns.some((c) => c.pending && !c.closed)) {
      for (const c of this.conns) c.flush();
      await Bun.sleep(1);
    }
    const wall = (performance.now() - start) / 1000;
    for (let i = 0; i < perSecond.length; i++) perSecond[i] ??= 0;
    const errors = this.conns.reduce((a, c) => a + c.errors, 0) - errors0;
    const nominal = total * C;
    const got = sent.reduce((a, b) => a + b, 0);
    const why: string[] = [];
    if (errors > 0) why.push(`${errors} socket errors`);
    if (got !== nominal) why.push(`sent ${got} of ${nominal}`);
    if (wall > seconds + 1.5) why.push(`wall ${wall.toFixed(2)} s > ${seconds} + 1.5 s`);
    const interior = perSecond.slice(1, -1);
    const bad = interior.filter((n) => n < rate * 0.95 || n > rate * 1.1);
    if (bad.length) why.push(`${bad.length} interior seconds outside 95–110 % of ${rate}/s (min ${Math.min(...interior)}, max ${Math.max(...interior)})`);
    return {
      tag,
      rate,
      seconds,
      conns: C,
      nominal,
      sent: got,
      sent_per_conn: sent,
      errors,
      wall_s: Math.round(wall * 1000) / 1000,
      per_second: perSecond,
      pending_max_bytes: pendingMax,
      on_schedule: why.length === 0,
      why,
      started_at: epoch,
    };
  }

  close(): void {
    for (const c of this.conns) c.socket.end();
  }
}

// ---------------------------------------------------------------------------------------------
// The minimal counting subscriber (for the generator's own ceiling): a raw MQTT reader that counts
// PUBLISH packets and prints the count every 100 ms.

async function countSubscriber(port: number, topic: string): Promise<void> {
  let count = 0;
  let rest: Buffer | null = null;
  const parse = (chunk: Buffer) => {
    const b: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
    let o = 0;
    for (;;) {
      if (o + 2 > b.length) break;
      let len = 0;
      let mul = 1;
      let i = o + 1;
      let ok = false;
      while (i < b.length) {
        const x = b[i++]!;
        len += (x & 127) * mul;
        mul *= 128;
        if ((x & 128) === 0) {
          ok = true;
          break;
        }
      }
      if (!ok || i + len > b.length) break;
      if (b[o]! >> 4 === 3) count++;
      o = i + len;
    }
    rest = o < b.length ? Buffer.from(b.subarray(o)) : null;
  };
  const s = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data: (_s, d) => parse(d) } });
  s.write(connectFrame(`floe-count-${process.pid}`));
  await Bun.sleep(100);
  s.write(subscribeFrame(topic));
  // The count on demand: every line on stdin is answered with "count N".
  for await (const _ of console) process.stdout.write(`count ${count}\n`);
}

/** The generator's ceiling: publisher → bounded Mosquitto → counting subscriber, per rate. */
async function ceiling(rates: number[], seconds: number, conns: number): Promise<unknown[]> {
  const { startBroker } = await import("./broker.ts");
  const { CPUS, pinned, pinSelf, cpuSeconds, load } = await import("./meter.ts");
  pinSelf(CPUS.load);
  const broker = await startBroker(CPUS.load);
  const sub = Bun.spawn([...pinned(CPUS.engine), process.execPath, import.meta.path, "--count", String(broker.port), "bench/#"], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const replies = sub.stdout.getReader();
  const dec = new TextDecoder();
  let buf = "";
  /** Asks the subscriber for its count now. */
  const ask = async (): Promise<number> => {
    sub.stdin.write("?\n");
    sub.stdin.flush();
    for (;;) {
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        return Number(line.slice(6));
      }
      const { value } = await replies.read();
      buf += dec.decode(value);
    }
  };
  const gen = await Generator.open(broker.port, conns);
  await Bun.sleep(500);
  const out: unknown[] = [];
  for (const rate of rates) {
    const base = await ask();
    const b0 = cpuSeconds(broker.pid);
    const load0 = load();
    const g = await gen.run(WORKLOADS.w1, `ceil${rate}`, rate, seconds);
    const gap = g.sent - ((await ask()) - base);
    await Bun.sleep(3000);
    const received = (await ask()) - base;
    const brokerUs = ((cpuSeconds(broker.pid) - b0) * 1e6) / g.sent;
    const row = {
      rate,
      seconds,
      on_schedule: g.on_schedule,
      why: g.why,
      sent: g.sent,
      received,
      lost: g.sent - received,
      gap_at_end_of_send: gap,
      clean: g.on_schedule && received === g.sent && gap <= 4096,
      broker_us_per_msg: Math.round(brokerUs * 100) / 100,
      wall_s: g.wall_s,
      pending_max_bytes: g.pending_max_bytes,
      load: load0,
    };
    console.error(JSON.stringify(row));
    out.push(row);
  }
  gen.close();
  sub.kill();
  await broker.stop();
  return out;
}

if (import.meta.main) {
  const { values: a, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      port: { type: "string" },
      rate: { type: "string", default: "20000" },
      seconds: { type: "string", default: "20" },
      conns: { type: "string", default: "8" },
      workload: { type: "string", default: "w1" },
      tag: { type: "string", default: "run" },
      ceiling: { type: "boolean" },
      rates: { type: "string", default: "50000,100000,120000,150000" },
      count: { type: "boolean" },
      out: { type: "string" },
    },
  });
  if (a.count) {
    await countSubscriber(Number(positionals[0]), positionals[1] ?? "#");
  } else if (a.ceiling) {
    const rows = await ceiling(a.rates!.split(",").map(Number), Number(a.seconds), Number(a.conns));
    const text = JSON.stringify({ kind: "generator-ceiling", date: new Date().toISOString(), rows }, null, 2) + "\n";
    if (a.out) await Bun.write(a.out, text);
    process.stdout.write(text);
    process.exit(0);
  } else {
    if (!a.port) throw new Error("--port is required (or --ceiling)");
    const w = WORKLOADS[a.workload as WorkloadId];
    if (!w) throw new Error(`unknown workload ${a.workload}`);
    const gen = await Generator.open(Number(a.port), Number(a.conns));
    const r = await gen.run(w, a.tag!, Number(a.rate), Number(a.seconds));
    gen.close();
    console.log(JSON.stringify(r, null, 2));
    process.exit(0);
  }
}
