/**
 * A NATS server with JetStream of a test's own, on a free loopback port, that the test can stop
 * (SIGTERM or SIGKILL) and restart on the same port and store directory (JetStream data survives a
 * restart). Fails with a message naming the package when `nats-server` is not installed. Also
 * usable by benchmarks and the cluster tests (`monitor` port for `/jsz`, extra args for a cluster).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { afterAll, beforeAll } from "bun:test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { canConnect, freePort } from "./mosquitto.ts";

/** The group secret the tests' members share (cluster.secret). */
export const GROUP_SECRET = "floe-tests-group-secret-0123456789";
/** `ClusterSettings.auth` for members a test connects in-process. */
export const GROUP_AUTH = { secret: GROUP_SECRET, secretFile: "", nats: {}, base: process.cwd() };

export function natsServerPath(): string {
  const p = Bun.which("nats-server") ?? ["/usr/sbin/nats-server", "/usr/local/bin/nats-server", "/usr/bin/nats-server"].find((x) => Bun.file(x).size > 0);
  if (!p) throw new Error("nats-server is not installed: `apt-get install nats-server` (the NATS tests start their own servers)");
  return p;
}

export class NatsServer {
  private proc: Subprocess | undefined;
  private starts = 0;
  /** JetStream store and logs. */
  readonly dir: string;
  readonly url: string;

  private constructor(
    readonly port: number,
    private readonly extra: string[],
  ) {
    this.dir = mkdtempSync(join(tmpdir(), "floe-nats-"));
    this.url = `nats://127.0.0.1:${port}`;
  }

  /** Starts a server with JetStream; `extra` arguments are appended (`--cluster …`, `-c conf`). */
  static async start(extra: string[] = []): Promise<NatsServer> {
    const s = new NatsServer(await freePort(), extra);
    await s.restart();
    return s;
  }

  /** The server process id (benchmarks read its CPU time). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null;
  }

  async restart(): Promise<void> {
    const log = join(this.dir, `nats-${++this.starts}.log`);
    this.proc = Bun.spawn([natsServerPath(), "-js", "-a", "127.0.0.1", "-p", String(this.port), "-sd", join(this.dir, "store"), ...this.extra], {
      stdout: "ignore",
      stderr: Bun.file(log),
    });
    for (let i = 0; i < 300; i++) {
      if (await canConnect(this.port)) {
        // The listener is up a moment before JetStream has recovered its streams.
        await this.waitJetStream();
        return;
      }
      if (this.proc.exitCode !== null) break;
      await Bun.sleep(10);
    }
    throw new Error(`nats-server did not start on port ${this.port}: ${this.log()}`);
  }

  private async waitJetStream(): Promise<void> {
    for (let i = 0; i < 300; i++) {
      if (/Server is ready/.test(this.log())) return;
      await Bun.sleep(10);
    }
  }

  /** Everything the server logged since it was first started. */
  log(): string {
    let out = "";
    for (let i = 1; i <= this.starts; i++) {
      try {
        out += readFileSync(join(this.dir, `nats-${i}.log`), "utf8");
      } catch {
        // not written yet
      }
    }
    return out;
  }

  /** Stops the server (SIGTERM shuts down cleanly; SIGKILL as a crash). */
  async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    p.kill(signal);
    await p.exited;
    this.proc = undefined;
  }
}

/**
 * A NATS cluster of `n` JetStream servers on free loopback ports, routed to each other. `url` lists
 * every server, as a floe group's `cluster.nats` and a `nats` connector's `server` accept it.
 */
export class NatsCluster {
  private constructor(readonly servers: NatsServer[]) {}

  get url(): string {
    return this.servers.map((s) => s.url).join(",");
  }

  static async start(n = 3): Promise<NatsCluster> {
    const routes = await Promise.all(Array.from({ length: n }, () => freePort()));
    const routeUrl = (p: number) => `nats://127.0.0.1:${p}`;
    const servers = await Promise.all(
      routes.map((p, i) =>
        NatsServer.start([
          "--server_name", `floe-n${i + 1}`, "--cluster_name", "floe",
          "--cluster", routeUrl(p), "--routes", routes.filter((q) => q !== p).map(routeUrl).join(","),
        ]),
      ),
    );
    const c = new NatsCluster(servers);
    await c.waitMetaLeader();
    return c;
  }

  /** JetStream in a cluster answers once its servers have elected a meta leader. */
  private async waitMetaLeader(): Promise<void> {
    const { connect } = await import("@nats-io/transport-node");
    const { jetstreamManager } = await import("@nats-io/jetstream");
    const nc = await connect({ servers: this.url.split(",") });
    try {
      for (let i = 0; i < 300; i++) {
        try {
          await (await jetstreamManager(nc)).getAccountInfo();
          return;
        } catch {
          await Bun.sleep(100);
        }
      }
      throw new Error("the NATS cluster elected no JetStream meta leader within 30 s");
    } finally {
      await nc.close();
    }
  }

  async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    for (const s of this.servers) await s.stop(signal);
  }
}

/** One JetStream server for a test file, with a client connection and its manager: started before the file's tests, stopped after. */
export interface JetStreamFixture {
  server: NatsServer;
  nc: NatsConnection;
  jsm: JetStreamManager;
}

export function jetStreamFixture(): JetStreamFixture {
  const fx = {} as JetStreamFixture;
  beforeAll(async () => {
    fx.server = await NatsServer.start();
    fx.nc = await connect({ servers: fx.server.url });
    fx.jsm = await jetstreamManager(fx.nc);
  });
  afterAll(async () => {
    await fx.nc?.close();
    await fx.server?.stop();
  });
  return fx;
}
