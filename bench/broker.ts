/**
 * The benchmark broker (bench.md §Method 1): a Mosquitto of the harness's own on a free loopback
 * port, pinned to the generator's CPU, with bounded queues so that backlog cannot hide in it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { canConnect, mosquittoPath } from "../test/helpers/mosquitto.ts";
import { CPUS, pinned } from "./meter.ts";

/** A free loopback TCP port (bound, read, released). */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const p = s.port;
  s.stop(true);
  return p;
}

export interface Broker {
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

/** Starts a bounded Mosquitto on `cpu`; resolves once it accepts connections. */
export async function startBroker(cpu = CPUS.load): Promise<Broker> {
  const mosq = mosquittoPath();
  const dir = mkdtempSync(join(tmpdir(), "floe-bench-mosq-"));
  const port = freePort();
  const conf = join(dir, "mosquitto.conf");
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      "allow_anonymous true",
      "max_queued_messages 4096",
      "max_queued_bytes 1048576",
      "persistence false",
      "max_inflight_messages 0",
      "",
    ].join("\n"),
  );
  const p: Subprocess = Bun.spawn([...pinned(cpu), mosq, "-c", conf], { stdout: "ignore", stderr: "ignore" });
  for (let i = 0; i < 100 && !(await canConnect(port)); i++) await Bun.sleep(50);
  if (!(await canConnect(port))) throw new Error(`mosquitto did not start on port ${port}`);
  return {
    port,
    pid: p.pid,
    async stop() {
      p.kill();
      await p.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
