/**
 * THE RULE RUNTIME API — what the REST daemon (and pipe mode) drive.
 *
 *   const env = createRuntimeEnv({ etcDir, dataDir, zone, ruleDefaults, cacheDefaults, confKey, log });
 *   const hub = new SourceHub(env);                      // one per process (shared streams)
 *   const rule = Rule.create(ruleJson, streams, env, hub); // validates; throws EngineError
 *   await rule.start();                                  // state "running" (or "stopped by error")
 *   rule.status();                                       // GET /rules/{id}/status object
 *   rule.topo();                                         // GET /rules/{id}/topo, undefined before a run
 *   await rule.stop();                                   // "stopped", message "canceled manually"
 *
 * Contract:
 * - `Rule.create` checks, in order, options (`Rule <id> has invalid options: …`), the SQL (parse
 *   errors as the parser words them), the streams it reads (`fail to get stream <s>, please check
 *   if stream is created`), planning errors, and every action (`sink <type> is not defined`,
 *   connector property errors, `fail to parse sink configuration: …`). The daemon adds its own
 *   prefixes (`invalid rule json: …`). `streams` holds every stream/table definition by name.
 * - `start()` plans a fresh run (metrics restart from zero) and resolves once sources are attached
 *   and sinks are connecting; connectors connect asynchronously with backoff, so an unreachable
 *   broker leaves the rule `running` with `connection_status` 0/−1. If starting fails the state is
 *   `stopped by error` with the error text as message, and `start()` rejects with it.
 *   Starting a running rule restarts it (last will `stopped by update`), as eKuiper's start API.
 * - `stop(message)` stops reading, ends the topology, lets each sink drain for
 *   `env.sinkGraceMs`, saves sink caches (unless `cleanCacheAtStop`), closes connections. Metrics
 *   of the last run stay visible while stopped. Concurrent start/stop calls are serialised.
 * - When every source reaches EOF the rule stops by itself with message `done`; `onEnd` fires
 *   (the daemon then sets `triggered=false`). A failure at run time (not a record error: those are
 *   counted on the node and the rule goes on) stops it as `stopped by error` with the failure's
 *   text as message (eKuiper leaves it empty; floe never does, issue 10) and also fires `onEnd`;
 *   `state` tells the two apart.
 * - `lost()` counts records lost since creation (sink drops, evictions, unsent at stop, and
 *   what an earlier run lost acknowledged but unsaved, from the acknowledgement ledger: that part
 *   is also the status key `source_<s>_0_records_lost_total`); `duplicates()` the MQTT
 *   redeliveries the sources admitted. Neither is a status key.
 * - State names are eKuiper's (rest-api.md §6.1): see `RuleState`.
 */
import { EngineError, ErrCode } from "../errors.ts";
import { parseSinkCommon, type SinkCommon } from "../io/sinks/common.ts";
import { createSinkConnector } from "../io/sinks/index.ts";
import { SinkPipeline } from "../io/sinks/pipeline.ts";
import { mergeProps } from "../io/props.ts";
import { selectorError } from "../io/sources/index.ts";
import type { SourceConnector } from "../io/sources/source.ts";
import type { StreamDef } from "../plan/streams.ts";
import { analyze } from "../plan/analyze.ts";
import { parseSelect } from "../sql/parse.ts";
import type { SelectStatement } from "../sql/ast.ts";
import type { RuntimeEnv } from "./env.ts";
import { statusObject, type NodeMetrics } from "../core/metrics.ts";
import { parseRuleOptions, type RuleOptions } from "../plan/rule-options.ts";
import { RuleRun } from "./rule-run.ts";
import { GRAPH_SELECT, planRuleGraph } from "./graph-plan.ts";
import type { SourceHub } from "./sources.ts";
import type { ScanTableContent } from "./operators/join.ts";
import type { ErrorReport } from "./error-report.ts";
import type { SinkNode } from "../core/sink.ts";
import type { TraceStrategy } from "./trace/rule-tracer.ts";

export type RuleState = "stopped" | "starting" | "running" | "stopping" | "stopped: waiting for next schedule." | "stopped by error";

/** The parts of an eKuiper rule JSON the runtime reads (rules-and-sinks.md §1). */
export interface RuleDefinition {
  readonly id: string;
  readonly name?: string;
  readonly sql: string;
  /** The SELECT already parsed (pipe mode); `sql` is then not read. */
  readonly select?: SelectStatement;
  readonly actions: unknown;
  readonly options?: unknown;
  /** A graph rule's `graph` (graph-rules.md); `sql` and `actions` are then not read. */
  readonly graph?: unknown;
  readonly temp?: boolean;
}

export interface RuleHostOptions {
  /** Sinks placed before the actions, which then number from `extraSinks.length` (pipe mode's stdout). */
  readonly extraSinks?: readonly SinkNode[];
  /** Type of a stream or table without TYPE (default: eKuiper's, `mqtt` for streams and `file` for tables). */
  readonly defaultType?: string;
  /** Host-built source connectors by stream name. */
  readonly connectors?: ReadonlyMap<string, SourceConnector>;
  /** Pipe mode's stderr report of decode and row errors (rule-run.ts). */
  readonly errors?: ErrorReport;
}

interface Action {
  readonly type: string;
  readonly index: number;
  readonly props: Record<string, unknown>;
  readonly common: SinkCommon;
  /** A graph rule's sink node name. */
  readonly node?: string;
}

export class Rule {
  private _state: RuleState = "stopped";
  private _message = "";
  private lastStart = 0;
  private lastStop = 0;
  private run: RuleRun | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private lostBefore = 0;
  /** Called when the rule ends by itself (`done`, or stopped by error at run time). */
  onEnd: ((rule: Rule) => void) | undefined;

  private constructor(
    readonly id: string,
    readonly name: string,
    readonly options: RuleOptions,
    private readonly select: SelectStatement,
    private readonly streams: ReadonlyMap<string, StreamDef>,
    private readonly actions: readonly Action[],
    private readonly env: RuntimeEnv,
    private readonly hub: SourceHub,
    private readonly host: RuleHostOptions,
    private readonly graph?: { json: unknown; temp: boolean },
  ) {}

  /** Validates a rule definition (see the contract above); the rule starts stopped. */
  static create(def: RuleDefinition, streams: ReadonlyMap<string, StreamDef>, env: RuntimeEnv, hub: SourceHub, host: RuleHostOptions = {}): Rule {
    const options = parseRuleOptions(def.id, def.options, env.ruleDefaults);
    if (def.graph !== undefined && def.graph !== null) {
      // Planned here to validate (sources, operators, sinks); each run plans again.
      const g = planRuleGraph(def.id, def.graph, !!def.temp, streams, options, env, () => Date.now(), () => false);
      const actions = g.sinks.map((k, i): Action => ({ type: k.type, index: i, node: k.node, props: k.props, common: parseSinkCommon(k.props, env.cacheDefaults) }));
      return new Rule(def.id, def.name ?? "", options, GRAPH_SELECT, streams, actions, env, hub, host, { json: def.graph, temp: !!def.temp });
    }
    const select = def.select ?? parseSelect(def.sql, env.functions);
    analyze(select, streams, { functions: env.functions, sendMetaToSink: options.sendMetaToSink });
    const actions = parseActions(def.actions, env, def.id, host.extraSinks?.length ?? 0);
    return new Rule(def.id, def.name ?? "", options, select, streams, actions, env, hub, host);
  }

  get state(): RuleState {
    return this._state;
  }

  get message(): string {
    return this._message;
  }

  private serial<T>(f: () => Promise<T>): Promise<T> {
    const p = this.queue.then(f, f);
    this.queue = p.catch(() => undefined);
    return p;
  }

  start(): Promise<void> {
    return this.serial(async () => {
      if (this.run) await this.doStop("stopped by update", false);
      this._state = "starting";
      this._message = "";
      this.lastStart = Date.now();
      try {
        const run = new RuleRun(
          {
            id: this.id,
            select: this.select,
            graph: this.graph,
            streams: this.streams,
            options: this.options,
            sinks: () => this.actions.map((a) => this.pipeline(a)),
            extraSinks: this.host.extraSinks ?? [],
            defaultType: this.host.defaultType,
            connectors: this.host.connectors,
            errors: this.host.errors,
          },
          this.env,
          this.hub,
        );
        this.run = run;
        run.onAllEof = () => void this.serial(() => this.doStop("done", true)).then(() => this.onEnd?.(this));
        // eKuiper shows an empty message here; floe shows what stopped the rule.
        run.onFatal = () =>
          void this.serial(async () => {
            await this.doStop(run.fatalMessage, false);
            this._state = "stopped by error";
          }).then(() => this.onEnd?.(this));
        await run.start();
        this._state = "running";
      } catch (e) {
        this._state = "stopped by error";
        this._message = e instanceof Error ? e.message : String(e);
        this.lastStop = Date.now();
        throw e;
      }
    });
  }

  /** Stops the rule; `flushWindows` (pipe mode's Ctrl-C) first processes admitted records and emits open windows. */
  stop(message = "canceled manually", flushWindows = false): Promise<void> {
    return this.serial(() => this.doStop(message, flushWindows));
  }

  private async doStop(message: string, flushWindows: boolean): Promise<void> {
    const run = this.run;
    if (!run || this._state === "stopped" || this._state === "stopped by error") return;
    this._state = "stopping";
    try {
      await run.stop({ flushWindows });
    } finally {
      this.lostBefore += run.lost();
      this._state = "stopped";
      this._message = message;
      this.lastStop = Date.now();
    }
  }

  private pipeline(a: Action): SinkPipeline {
    const cache = a.common.cache;
    // The alter queue's resend instance: same connector, `topic` = resendDestination when set.
    const resendProps = cache.resendDestination ? { ...a.props, topic: cache.resendDestination } : a.props;
    return new SinkPipeline({
      ruleId: this.id,
      type: a.type,
      index: a.index,
      node: a.node,
      props: a.props,
      common: a.common,
      connector: createSinkConnector(a.type, a.props, this.env),
      resendConnector: cache.enableCache && cache.resendAlterQueue ? createSinkConnector(a.type, resendProps, this.env) : undefined,
      dataDir: this.env.dataDir,
      aesKey: this.env.aesKey,
      log: (l) => this.env.log(l),
    });
  }

  /** The legacy status object (rest-api.md §6.2); JSON.stringify(…, null, 2) gives the body. */
  status(): Record<string, number | string> {
    return statusObject(
      { status: this._state, message: this._message, lastStartTimestamp: this.lastStart, lastStopTimestamp: this.lastStop, nextStartTimestamp: 0 },
      this.run ? this.run.nodes() : [],
    );
  }

  /** Every node's metrics of the current or last run (status order); empty before a run. */
  nodes(): readonly NodeMetrics[] {
    return this.run ? this.run.nodes() : [];
  }

  /** `GET /rules/{id}/topo`; undefined when the rule never ran. */
  topo(): { sources: string[]; edges: Record<string, string[]> } | undefined {
    return this.run?.topoJson();
  }

  /** Starts tracing the running run with `strategy`, or stops it (undefined); a new run starts untraced. */
  trace(strategy: TraceStrategy | undefined): void {
    if (this._state === "running") this.run?.trace(strategy);
  }

  /** The current run's scan tables and their rows; undefined when not running or joining none. */
  scanTables(): ScanTableContent[] | undefined {
    return this._state === "running" ? this.run?.topo.scanTables() : undefined;
  }

  /** `PUT /rules/{id}/reset_state`: rewinds a rewindable source of the running rule. */
  resetState(stream: string, input: unknown): void {
    if (this._state !== "running" || !this.run) throw new EngineError(`rule ${this.id} should be running when modify state`);
    this.run.resetState(stream, input);
  }

  /** Records lost since the rule was created (sink drops, unsent at stop, late rows). */
  lost(): number {
    return this.lostBefore + (this.run && this._state !== "stopped" ? this.run.lost() : 0);
  }

  /** Redelivered messages (MQTT DUP) the current run's sources admitted; a floe counter, not a status key. */
  duplicates(): number {
    let n = 0;
    for (const m of this.run?.nodes() ?? []) if (m.kind === "source") n += m.duplicates;
    return n;
  }

  /** The current run's sink pipelines (tests, diagnostics). */
  get sinks(): readonly SinkPipeline[] {
    return this.run?.pipelines ?? [];
  }
}

function parseActions(raw: unknown, env: RuntimeEnv, ruleId: string, base: number): Action[] {
  if (!Array.isArray(raw)) throw new EngineError("Missing rule actions.", ErrCode.undefined);
  const out: Action[] = [];
  raw.forEach((entry: unknown, i: number) => {
    if (!entry || typeof entry !== "object" || Array.isArray(entry)) return;
    // Several keys in one element: several sinks with the same index, built in key order.
    for (const type of Object.keys(entry).sort()) {
      let props = (entry as Record<string, unknown>)[type];
      if (!props || typeof props !== "object" || Array.isArray(props))
        throw new EngineError(`expect map[string]interface{} type for the action properties, but found ${JSON.stringify(props)}`, ErrCode.rule);
      const p = props as Record<string, unknown>;
      const sel = typeof p.connectionSelector === "string" ? p.connectionSelector : "";
      if (sel) {
        const conn = env.confKey?.("connections", type, sel);
        if (!conn) throw selectorError(sel, type, env);
        props = mergeProps(p, conn);
      }
      const rid = typeof p.resourceId === "string" ? p.resourceId : "";
      if (rid) props = mergeProps(env.confKey?.("sinks", type, rid), props as Record<string, unknown>);
      const merged = props as Record<string, unknown>;
      // Connector properties first, then the common ones (rules-and-sinks.md §3).
      createSinkConnector(type, merged, env);
      const common = parseSinkCommon(merged, env.cacheDefaults);
      out.push({ type, index: base + i, props: merged, common });
    }
  });
  void ruleId;
  return out;
}
