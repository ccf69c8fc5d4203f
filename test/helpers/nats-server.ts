/**
 * A NATS server with JetStream of a test's own, on a free loopback port, with its store in a temp
 * directory; the test can kill it and restart it on the same port and store. Fails with a message
 * naming the package when `nats-server` is not installed.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { canConnect, freePort } from "./mosquitto.ts";

export function natsServerPath(): string {
  const p = Bun.which("nats-server") ?? ["/usr/local/bin/nats-server", "/usr/bin/nats-server", "/usr/sbin/nats-server"].find((x) => Bun.file(x).size > 0);
  if (!p) throw new Error("nats-server is not installed: install nats-server (2.9 or later, JetStream) — the NATS tests start their own server");
  return p;
}

export class NatsServer {
  private proc: Subprocess | undefined;
  private starts = 0;
  readonly dir: string;
  readonly url: string;

  private constructor(readonly port: number) {
    this.dir = mkdtempSync(join(tmpdir(), "floe-nats-"));
    this.url = `nats://127.0.0.1:${port}`;
  }

  static async start(): Promise<NatsServer> {
    const s = new NatsServer(await freePort());
    await s.restart();
    return s;
  }

  async restart(): Promise<void> {
    const log = join(this.dir, `nats-${++this.starts}.log`);
    this.proc = Bun.spawn([natsServerPath(), "-js", "-a", "127.0.0.1", "-p", String(this.port), "-sd", join(this.dir, "js")], { stdout: "ignore", stderr: Bun.file(log) });
    for (let i = 0; i < 300; i++) {
      if (await canConnect(this.port)) return;
      if (this.proc.exitCode !== null) break;
      await Bun.sleep(10);
    }
    throw new Error(`nats-server did not start on port ${this.port}: ${readFileSync(log, "utf8")}`);
  }

  async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    p.kill(signal);
    await p.exited;
    this.proc = undefined;
  }
}
