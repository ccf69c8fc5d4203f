/**
 * Runs the latency probe (bench/latency-probe.ts) for a step: started pinned to the load CPU with the
 * broker and the generator (both arrivals it measures, floe's and the plain subscriber's, share that
 * handicap), then asked for its arrivals once the step has drained, and the latencies computed
 * against the generator's send table (bench/latency.ts).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { latencyStat, publishLatencies, windowCloseLatencies, type SendTable, type StepLatency } from "./latency.ts";
import { CPUS, pinned } from "./meter.ts";

/** W2/W4/W5 windows close on 10 s boundaries of the wall clock. */
const WINDOW_MS = 10_000;

export interface ProbeOptions {
  port: number;
  out: string;
  in?: string;
  file: string;
  arrivals: string;
  tag: string;
}

export interface Probe {
  /** Stops the probe and returns the step's latency. */
  finish(sends: SendTable, window: boolean): Promise<StepLatency>;
  kill(): void;
}

export async function startProbe(o: ProbeOptions): Promise<Probe> {
  mkdirSync(o.arrivals, { recursive: true });
  const args = ["--port", String(o.port), "--out", o.out, "--file", o.file, "--arrivals", o.arrivals, "--tag", o.tag, ...(o.in ? ["--in", o.in] : [])];
  const p = Bun.spawn([...pinned(CPUS.load), process.execPath, join(import.meta.dir, "latency-probe.ts"), ...args], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const reader = p.stdout.getReader();
  const dec = new TextDecoder();
  let buf = "";
  const nextLine = async (what: string): Promise<string> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        return line;
      }
      if (Date.now() > deadline) throw new Error(`latency probe: no ${what}`);
      const { value, done } = await reader.read();
      if (done) throw new Error(`latency probe exited before ${what}`);
      buf += dec.decode(value);
    }
  };
  if ((await nextLine("ready")) !== "ready") throw new Error("latency probe did not subscribe");
  const read = async (name: string) => new Float64Array(await Bun.file(join(o.arrivals, name)).arrayBuffer());
  return {
    async finish(sends, window) {
      p.stdin.write("end\n");
      p.stdin.flush();
      if ((await nextLine("done")) !== "done") throw new Error("latency probe did not write its arrivals");
      await p.exited;
      if (window) return { kind: "window_close", floe: latencyStat(windowCloseLatencies(await read("win.f64"), WINDOW_MS)), subscriber: null, unmatched: 0 };
      const floe = publishLatencies(await read("out.f64"), sends);
      const sub = publishLatencies(await read("in.f64"), sends);
      return { kind: "publish", floe: latencyStat(floe.ms), subscriber: latencyStat(sub.ms), unmatched: floe.unmatched + sub.unmatched };
    },
    kill() {
      p.kill();
    },
  };
}
