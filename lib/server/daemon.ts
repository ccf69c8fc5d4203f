/**
 * `floe serve`: opens the engine, starts the listeners (REST on `restIp:restPort`, the same API
 * for the CLI on `ip:port` in place of eKuiper's RPC server, Prometheus on its own port when
 * configured), prints eKuiper's startup line, and stops gracefully on SIGTERM/SIGINT or `/stop`.
 */
import { resolvePaths, type PathFlags } from "../config/index.ts";
import { createLogger, parseLevel, type Level, type LogFormat } from "../log.ts";
import { RotatingLog } from "../log-file.ts";
import { loopLag } from "../runtime/loop-lag.ts";
import { codeTrimPeriod, trimCodePages } from "../runtime/code-pages.ts";
import { memoryGovernor } from "../runtime/memory.ts";
import { createHandler, Engine, type EngineOptions } from "./index.ts";
import { metricsResponse } from "./metrics.ts";
import { ruleRuntime } from "./runtime-bridge.ts";
import { guardStart } from "./safe-mode.ts";
import { importInitJson } from "./transfer.ts";

export interface DaemonOptions extends PathFlags {
  readonly env?: Record<string, string | undefined>;
  readonly version: string;
  readonly runtime?: EngineOptions["runtime"];
  readonly out?: (line: string) => void;
  readonly logger?: (line: string) => void;
  /** `floe serve --safe`: serve REST without starting rules or loading UDF scripts (safe-mode.ts). */
  readonly safe?: boolean;
  /** `--log-level`: wins over basic.logLevel. */
  readonly logLevel?: string;
  /** `--log-format json`: one JSON object per log line. */
  readonly logFormat?: LogFormat;
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
  // Lines go to stderr until the configuration says otherwise (basic.fileLog / consoleLog below).
  let logWrite = (l: string): void => void process.stderr.write(l);
  const logger = createLogger((l) => logWrite(l), { level: parseLevel(o.logLevel) ?? "info", format: o.logFormat });
  const log = o.logger ?? ((l: string, level: Level = "info") => logger[level](l));
  const out = o.out ?? ((l: string) => process.stdout.write(l + "\n"));
  if (!paths.etc) log(`floe: no etc directory found: using built-in defaults`);
  const engine = await Engine.open({ paths, env, runtime: o.runtime ?? ruleRuntime, log, logger, version: o.version });
  const basic = engine.config.basic;
  logger.setLevel(parseLevel(o.logLevel) ?? (basic.debug ? "debug" : parseLevel(basic.logLevel)) ?? "info");
  let logFile: RotatingLog | undefined;
  if (basic.fileLog) {
    logFile = new RotatingLog({ dir: paths.log, rotateTimeHours: basic.rotateTime, rotateSize: basic.rotateSize, rotateCount: basic.rotateCount, maxAgeHours: basic.maxAge });
    const file = logFile.write;
    logWrite = basic.consoleLog ? (l) => (file(l), void process.stderr.write(l)) : file;
  }
  logger.info(`etc directory: ${paths.etc ?? "none found (built-in defaults)"}`);
  logger.info(`data directory: ${paths.data}`);
  logger.info(`log directory: ${paths.log}${logFile ? ` (writing ${logFile.current})` : " (basic.fileLog is off: logging to stderr)"}`);
  // Counted before any rule or script loads: a start that hangs or crashes there counts too.
  const after = Number.parseInt(env.FLOE_SAFE_AFTER_CRASHES ?? "", 10);
  const guard = guardStart({ dataDir: paths.data, flag: !!o.safe, after: Number.isFinite(after) ? after : undefined });
  engine.safeMode = guard.mode;
  if (guard.mode.on) logger.warn(`safe mode: ${guard.mode.reason}; rules are not started and UDF scripts are not loaded`);
  await engine.loadScripts();
  engine.start(importInitJson);
  loopLag.start();
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
  let promServer: unknown;
  if (basic.prometheus && basic.prometheusPort !== basic.restPort) {
    servers.push((promServer = Bun.serve({ hostname: basic.restIp, port: basic.prometheusPort, fetch: (req) => (new URL(req.url).pathname === "/metrics" ? metricsResponse(engine) : new Response("404 page not found\n", { status: 404 })) })));
  }
  const restPort = rest.port ?? basic.restPort;
  const scheme = basic.restTls ? "https" : "http";
  logger.info(`REST API listening on ${scheme}://${joinHostPort(basic.restIp, restPort)}`);
  if (servers.length > 1 && servers[1] !== promServer) logger.info(`CLI (kuiper-style) listening on http://${joinHostPort(basic.ip, cliPort)}`);
  if (basic.prometheus) logger.info(`Prometheus metrics on http://${joinHostPort(basic.restIp, basic.prometheusPort === basic.restPort ? restPort : basic.prometheusPort)}/metrics`);
  if (engine.cluster) {
    await engine.cluster.join(`${scheme}://${joinHostPort(basic.restIp, restPort)}`);
    logger.info(`cluster: instance ${engine.cluster.instance} joined group ${engine.cluster.settings.group} on ${engine.cluster.settings.nats.join(",")}`);
  }
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => (resolveDone = r));
  let stopping: Promise<void> | undefined;
  const stop = (code = 0): Promise<void> =>
    (stopping ??= (async () => {
      const t0 = Date.now();
      logger.info(`shutting down: stopping ${engine.rules.list().filter((r) => r.status === "running").length} running rule(s), waiting up to ${basic.gracefulShutdownTimeoutMs} ms for their sinks`);
      for (const s of servers) s.stop(true);
      await engine.trials.close();
      await engine.shutdown();
      logger.info(`stopped in ${Date.now() - t0} ms (exit status ${code})`);
      guard.clean();
      logFile?.close();
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
  // The start-up's code pages go back 3 s from now (the code-trim timer below).
  activity.last = Date.now();
  activity.code = true;
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
 * (+24 % RSS without the shrink, bench/daemon-rss.ts). Both stop the world (and running rules re-JIT their
 * hot path afterwards), so they wait for the message path to be idle: a stall there lets a
 * broker's queue overflow. Requests mark activity; the timer keeps nothing alive.
 */
const activity = { last: 0, dirty: false, code: false };
/**
 * The executable's code pages back to the page cache (runtime/code-pages.ts): 3 s after the start
 * or a burst of management calls (the parser's, the planner's and the API's pages), and every
 * `FLOE_CODE_TRIM_S` seconds (60; 0 never) for what JSC's compiler tiers touched meanwhile. Unlike
 * the collection it does not wait for an idle message path: it takes 1–3 ms and the pages a rule
 * uses come back with minor faults.
 */
const codeTrimMs = codeTrimPeriod(process.env.FLOE_CODE_TRIM_S) * 1000;
let lastTrim = Date.now();
setInterval(() => {
  const idle = memoryGovernor.idleTick();
  const now = Date.now();
  if (activity.dirty && now - activity.last > 3000 && idle >= 3) {
    activity.dirty = false;
    Bun.gc(true);
    Bun.shrink();
  }
  if (codeTrimMs > 0 && ((activity.code && now - activity.last > 3000) || now - lastTrim >= codeTrimMs)) {
    activity.code = false;
    lastTrim = now;
    trimCodePages();
  }
}, 1000).unref();

/** eKuiper disables keep-alive: every response carries `Connection: close`. */
function closeConnection(h: (req: Request) => Promise<Response>): (req: Request) => Promise<Response> {
  return async (req) => {
    activity.last = Date.now();
    activity.dirty = true;
    activity.code = true;
    const res = await h(req);
    res.headers.set("Connection", "close");
    return res;
  };
}
