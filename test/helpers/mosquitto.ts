/**
 * A Mosquitto broker of a test's own, on a free loopback port, that the test can kill and
 * restart (persistence survives a restart in the same directory). Fails with a message naming the
 * package when `mosquitto` is not installed. By default its queues are unbounded (tests about
 * floe, not about the broker); `{ defaults: true }` keeps mosquitto's own limits
 * (`max_queued_messages 1000`, `max_inflight_messages 20`) and log types, as a fresh install runs.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { waitFor } from "./wait.ts";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The mosquitto binary (the MQTT tests and the benchmark start their own brokers). */
export function mosquittoPath(): string {
  const p = Bun.which("mosquitto") ?? ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"].find((x) => Bun.file(x).size > 0);
  if (!p) throw new Error("mosquitto is not installed: `apt-get install mosquitto` (the MQTT tests and the benchmark start their own brokers)");
  return p;
}

/** Whether a TCP connection to the loopback port succeeds. */
export async function canConnect(port: number): Promise<boolean> {
  try {
    const s = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    s.end();
    return true;
  } catch {
    return false;
  }
}

export class Mosquitto {
  private proc: Subprocess | undefined;
  private starts = 0;
  readonly dir: string;
  readonly url: string;

  private constructor(
    readonly port: number,
    private readonly extra: string[],
    private readonly defaults: boolean,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), "floe-mosq-"));
    // Started as root, mosquitto drops to its own user, which must be able to save persistence here.
    chmodSync(this.dir, 0o777);
    this.url = `tcp://127.0.0.1:${port}`;
  }

  /** Starts a broker; `extra` lines are appended to its configuration. */
  static async start(extra: string[] = [], opts: { defaults?: boolean } = {}): Promise<Mosquitto> {
    const m = new Mosquitto(await freePort(), extra, opts.defaults ?? false);
    await m.restart();
    return m;
  }

  async restart(): Promise<void> {
    const conf = join(this.dir, "mosquitto.conf");
    writeFileSync(
      conf,
      [
        `listener ${this.port} 127.0.0.1`,
        "allow_anonymous true",
        "persistence true",
        `persistence_location ${this.dir}/`,
        ...(this.defaults ? [] : ["max_queued_messages 100000", "max_inflight_messages 0", "log_type all"]),
        ...this.extra,
        "",
      ].join("\n"),
    );
    // The broker's log goes to a file: an unread pipe would stall it once full.
    const proc = (this.proc = Bun.spawn([mosquittoPath(), "-c", conf], { stdout: "ignore", stderr: Bun.file(join(this.dir, `mosquitto-${++this.starts}.log`)) }));
    const up = await waitFor(async () => proc.exitCode !== null || (await canConnect(this.port)), "mosquitto to listen", 5000, 10).then(() => proc.exitCode === null, () => false);
    if (up) return;
    const err = await Bun.file(join(this.dir, `mosquitto-${this.starts}.log`)).text().catch(() => "");
    throw new Error(`mosquitto did not start on port ${this.port}: ${err}`);
  }

  /** Established TCP connections to this broker, counted on the client side (IPv4 loopback). */
  clients(): number {
    const hex = `:${this.port.toString(16).toUpperCase().padStart(4, "0")}`;
    let n = 0;
    for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[2]?.endsWith(hex) && f[3] === "01") n++;
    }
    return n;
  }

  /** Everything the broker logged since it was first started. */
  log(): string {
    let out = "";
    for (let i = 1; i <= this.starts; i++) {
      try {
        out += readFileSync(join(this.dir, `mosquitto-${i}.log`), "utf8");
      } catch {
        // not written yet
      }
    }
    return out;
  }

  /** Stops the broker (SIGTERM saves its persistence; SIGKILL does not). */
  async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    p.kill(signal);
    await p.exited;
    this.proc = undefined;
  }
}
