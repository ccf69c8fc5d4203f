/**
 * Pipe mode over the streaming runtime (pipe-mode.md): used when the rule reads a real connector
 * (`TYPE="mqtt"`, memory, …) or a `.json` rule has actions. The rule runs until every source ends
 * or SIGINT/SIGTERM; then admitted records are processed, open windows flushed (`--on-eof flush`),
 * sinks drained, connections closed. Standard output is action 0 (`sink_stdout_0`).
 */
import type { FunctionRegistry } from "../functions/registry.ts";
import { loadConnectionYaml } from "../connectors/conf-files.ts";
import { errorText, EngineError, RowError } from "../errors.ts";
import { DataServer } from "../connectors/http/server.ts";
import { StdoutSink } from "../connectors/stdio/stdout.ts";
import { StdinSource } from "../connectors/stdio/stdin.ts";
import type { SourceConnector } from "../source/connector.ts";
import { isLookupTable, type StreamDef } from "../plan/streams.ts";
import type { SelectStatement } from "../sql/ast.ts";
import type { Item } from "../core/item.ts";
import { createRuntimeEnv } from "../runtime/env.ts";
import { Rule, type RunHandle } from "../runtime/rule.ts";
import { SourceHub } from "../runtime/sources.ts";
import { codeTrimPeriod, trimCodePagesEvery } from "../runtime/code-pages.ts";
import { failed, isStdin, pipeEnv, type PipeRequest, type PipeResult } from "./request.ts";
import { RateLimitedErrors } from "../runtime/rate-limited-errors.ts";
import type { SinkNode } from "../core/sink.ts";

/** The pipe-mode stdout sink, flushed once per tick. */
class TickStdout implements SinkNode {
  readonly metrics;
  private armed = false;
  constructor(
    private readonly s: StdoutSink,
    private readonly lag: () => Promise<void> | undefined,
  ) {
    this.metrics = s.metrics;
  }
  room(): number {
    return this.lag() ? 0 : Infinity;
  }
  onRoom(fn: () => void): void {
    const lag = this.lag();
    if (lag) void lag.then(fn);
    else fn();
  }
  push(item: Item): void {
    this.s.push(item);
    if (!this.armed) {
      this.armed = true;
      setTimeout(() => {
        this.armed = false;
        this.s.flush();
      }, 0);
    }
  }
  end(): void {
    this.s.end();
  }
}

export async function runLive(req: PipeRequest, select: SelectStatement | undefined, defs: ReadonlyMap<string, StreamDef>, functions: FunctionRegistry): Promise<PipeResult> {
  const errors = new RateLimitedErrors(req.warn);
  if (req.replay) {
    // Only `floe run --replay` gets here (floe test feeds connector streams from its cases).
    const connected = [...defs.values()].filter((d) => !isStdin(d) && !isLookupTable(d)).map((d) => `${d.name} (TYPE="${d.options.TYPE}")`);
    const why = connected.length ? `the rule reads ${connected.join(", ")} from its connector` : "the rule has actions or a graph";
    req.warn(`floe: --replay feeds stdin streams from envelopes on a virtual clock, but ${why}; drop --replay to run it live, or test it with floe test, which feeds every stream from the case's input\n`);
    return failed();
  }
  // Named connections (`connectionSelector`) come from etc/connections/connection.yaml.
  const conns = await loadConnectionYaml(req.etcDir);
  const connection = (type: string, id: string): Record<string, unknown> | undefined => {
    const byId = conns[type];
    const p = byId && typeof byId === "object" && !Array.isArray(byId) ? (byId as Record<string, unknown>)[id] : undefined;
    if (!p || typeof p !== "object" || Array.isArray(p)) return undefined;
    const props = { ...(p as Record<string, unknown>) };
    if (props.xOperation === "delete") return undefined;
    delete props.xOperation;
    return props;
  };
  const env = createRuntimeEnv({
    ...pipeEnv(req),
    // A streaming run says when each source receives: what was published before is not in its output.
    sourceReady: (stream, text) => req.warn(`floe: source ${stream}: ${text}\n`),
    functions,
    confKey: (kind, type, key) => (kind === "connections" ? connection(type, key) : undefined),
    dataServer: new DataServer(req.dataServer ?? { hostname: "127.0.0.1", port: 10081 }),
  });
  env.connections.resolve = (id) => {
    for (const typ of Object.keys(conns)) {
      const props = connection(typ, id);
      if (props) return { typ, props };
    }
    return undefined;
  };
  const hub = new SourceHub(env);
  const names = select ? [select.from.name, ...select.joins.map((j) => j.source.name)] : [];
  const connectors = new Map<string, SourceConnector>();
  let stdin: StdinSource | undefined;
  for (const n of names) {
    const def = defs.get(n);
    if (def && isStdin(def)) {
      if (stdin) {
        req.warn("floe: live pipe mode feeds one stdin stream; give the others a connector TYPE\n");
        return failed();
      }
      stdin = new StdinSource(req.input, (no, m) => errors.decode(`line ${no}`, m));
      connectors.set(n, stdin);
    }
  }
  const stdout = new StdoutSink(req.emit, req.write, () => Date.now());
  let rule: Rule;
  try {
    rule = Rule.create({ id: req.ruleId ?? "rule", sql: "", select, actions: req.actions ?? [], options: req.options, graph: req.graph }, defs, env, hub, {
      extraSinks: [new TickStdout(stdout, () => req.drain?.())],
      defaultType: "stdin",
      connectors,
      errors,
    });
  } catch (e) {
    if (!(e instanceof EngineError || e instanceof RowError)) throw e;
    req.warn(`floe: ${errorText(e)}\n`);
    return failed();
  }
  let onSignal: () => void = () => {};
  let onExit: () => void = () => {};
  const ended = new Promise<"signal" | "done">((resolve) => {
    onSignal = () => resolve("signal");
    // EOF of every source, or a failure at run time: the run has closed itself.
    onExit = () => resolve("done");
  });
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  req.signal?.addEventListener("abort", onSignal);
  // Pipe mode holds one run and reports how it ended with eKuiper's state fields (no restarts, no schedule).
  const startedAt = Date.now();
  let run: RunHandle;
  let why: "signal" | "done";
  // A live run lasts: its start-up's code pages leave the resident set as the daemon's do.
  const stopTrim = trimCodePagesEvery(codeTrimPeriod(process.env.FLOE_CODE_TRIM_S) * 1000);
  try {
    try {
      run = await rule.start(onExit);
    } catch (e) {
      req.warn(`floe: ${errorText(e)}\n`);
      return failed(report("stopped by error", errorText(e), startedAt, Date.now(), {}));
    }
    why = await ended;
    if (why === "signal") await run.stop(req.onEof === "flush");
  } finally {
    stopTrim();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    env.dataServer.close();
  }
  const stoppedAt = Date.now();
  stdout.flush();
  errors.end();
  const exit = run.exit;
  // A run-time failure stopped the rule (the report printed it): the run failed.
  const status =
    exit?.kind === "error"
      ? report("stopped by error", exit.message, startedAt, stoppedAt, run.metrics())
      : report("stopped", exit ? "done" : "canceled manually", startedAt, stoppedAt, run.metrics());
  return { exitCode: exit?.kind === "error" ? 1 : 0, lost: run.lost() + errors.decodeErrors + stdout.lost(), decodeErrors: errors.decodeErrors, rowErrors: errors.rowErrors, status };
}

/** The status object of the run (rest-api.md §6.2): state fields, then the run's metrics. */
function report(status: string, message: string, lastStartTimestamp: number, lastStopTimestamp: number, metrics: Record<string, number | string>): Record<string, number | string> {
  return { status, message, lastStartTimestamp, lastStopTimestamp, nextStartTimestamp: 0, ...metrics };
}
