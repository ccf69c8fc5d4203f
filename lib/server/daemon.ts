/**
 * `floe serve`: opens the engine, starts the listeners (REST on `restIp:restPort`, the same API
 * for the CLI on `ip:port` in place of eKuiper's RPC server, Prometheus on its own port when
 * configured), prints eKuiper's startup line, and stops gracefully on SIGTERM/SIGINT or `/stop`.
 */
import { resolvePaths, type PathFlags } from "../config/index.ts";
import { createLogger } from "../log.ts";
import { loopLag } from "../runtime/loop-lag.ts";
import { memoryGovernor } from "../runtime/memory.ts";
import { createHandler, Engine, type EngineOptions } from "./index.ts";
import { metricsResponse } from "./metrics.ts";
import { ruleRuntime } from "./runtime-bridge.ts";
import { guardStart } from "./safe-mode.ts";

export interface DaemonOptions extends PathFlags {
  readonly env?: Record<string, string | undefined>;
  readonly version: string;
  readonly runtime?: EngineOptions["runtime"];
  readonly out?: (line: string) => void;
  readonly logger?: (line: string) => void;
  /** `floe serve --safe`: serve REST without starting rules or loading UDF scripts (safe-mode.ts). */
  readonly safe?: boolean;
}

export interface Daemon {
  readonly engine: Engine;
  readonly restPort: number;
  readonly cliPort: number;
  /** Resolves with the exit status once the daemon has stopped. */
  readonly done: Promise<number>;
  stop(code?: number): Promise<void>;
}

/** Go `net.JoinHostPort`. */
function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

export async function startDaemon(o: DaemonOptions): Promise<Daemon> {
  const env = o.env ?? process.env;
  const paths = resolvePaths(o, env);
  const logger = createLogger();
  const log = o.logger ?? ((l: string) => logger.info(l));
  const out = o.out ?? ((l: string) => process.stdout.write(l + "\n"));
  if (!paths.etc) log(`floe: no etc directory found: using built-in defaults`);
  const engine = await Engine.open({ paths, env, runtime: o.runtime ?? ruleRuntime, log, logger, version: o.version });
  // Counted before any rule or script loads: a start that hangs or crashes there counts too.
  const after = Number.parseInt(env.FLOE_SAFE_AFTER_CRASHES ?? "", 10);
  const guard = guardStart({ dataDir: paths.data, flag: !!o.safe, after: Number.isFinite(after) ? after : undefined });
  engine.safeMode = guard.mode;
  if (guard.mode.on) logger.warn(`safe mode: ${guard.mode.reason}; rules are not started and UDF scripts are not loaded`);
  await engine.loadScripts();
  engine.start();
  loopLag.start();
  const basic = engine.config.basic;
  const maxRequestBodySize = Math.max(basic.maxBodySize, 1 << 30);
  const rest = Bun.serve({
    hostname: basic.restIp,
    port: basic.restPort,
    maxRequestBodySize,
    idleTimeout: 60,
    tls: basic.restTls ? { cert: Bun.file(basic.restTls.certfile), key: Bun.file(basic.restTls.keyfile) } : undefined,
    fetch: closeConnection(createHandler(engine)),
  });
  const cliHandler = createHandler(engine, { noAuth: true });
  const servers: { stop(force?: boolean): unknown }[] = [rest];
  let cliPort = basic.port;
  // Port 0 asks for a free port (tests); -1 turns the CLI listener off.
  if (basic.port >= 0 && !(basic.port === basic.restPort && basic.port !== 0 && basic.ip === basic.restIp)) {
    const cli = Bun.serve({ hostname: basic.ip, port: basic.port, maxRequestBodySize, fetch: closeConnection(cliHandler) });
    servers.push(cli);
    cliPort = cli.port ?? basic.port;
  }
  if (basic.prometheus && basic.prometheusPort !== basic.restPort) {
    servers.push(Bun.serve({ hostname: basic.restIp, port: basic.prometheusPort, fetch: (req) => (new URL(req.url).pathname === "/metrics" ? metricsResponse(engine) : new Response("404 page not found\n", { status: 404 })) }));
  }
  const restPort = rest.port ?? basic.restPort;
  const scheme = basic.restTls ? "https" : "http";
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => (resolveDone = r));
  let stopping: Promise<void> | undefined;
  const stop = (code = 0): Promise<void> =>
    (stopping ??= (async () => {
      for (const s of servers) s.stop(true);
      await engine.trials.close();
      await engine.shutdown();
      guard.clean();
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      process.off("uncaughtException", onUncaught);
      process.off("unhandledRejection", onUncaught);
      loopLag.stop();
      resolveDone(code);
    })());
  const onSignal = () => void stop(0);
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // A failure no rule boundary caught (a connector's socket callback …) is logged; the daemon and
  // its other rules go on.
  const onUncaught = (e: unknown) => logger.error(`uncaught error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.on("uncaughtException", onUncaught);
  process.on("unhandledRejection", onUncaught);
  engine.requestStop = (code) => void stop(code);
  // Printed last: a supervisor (or test) that waits for this line can signal the daemon at once.
  out(`Serving kuiper (version - ${o.version}) on port ${cliPort}, and restful api on ${scheme}://${joinHostPort(basic.restIp, restPort)}.`);
  return { engine, restPort, cliPort, done, stop };
}

/**
 * Memory back to the OS after bursts of management calls: once the API has been quiet for 3 s
 * after some activity, and no rule has processed a batch for 3 s either, one full collection
 * runs, then `Bun.shrink()` (JSC's shrinkFootprintWhenIdle: compiled code is dropped and the
 * allocator's free pages released). A collection alone frees the garbage of a burst (10,000 rule
 * create/delete cycles) but the pages stay resident, which on an edge device reads as a leak
 * (issue 5: +24 % RSS without the shrink). Both stop the world (and running rules re-JIT their
 * hot path afterwards), so they wait for the message path to be idle: a stall there lets a
 * broker's queue overflow (issue 10). Requests mark activity; the timer keeps nothing alive.
 */
const activity = { last: 0, dirty: false };
setInterval(() => {
  const idle = memoryGovernor.idleTick();
  if (activity.dirty && Date.now() - activity.last > 3000 && idle >= 3) {
    activity.dirty = false;
    Bun.gc(true);
    Bun.shrink();
  }
}, 1000).unref();

/** eKuiper disables keep-alive: every response carries `Connection: close`. */
function closeConnection(h: (req: Request) => Promise<Response>): (req: Request) => Promise<Response> {
  return async (req) => {
    activity.last = Date.now();
    activity.dirty = true;
    const res = await h(req);
    res.headers.set("Connection", "close");
    return res;
  };
}
