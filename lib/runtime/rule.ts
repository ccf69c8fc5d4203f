/**
 * THE RULE RUNTIME API — what the REST daemon (and pipe mode) drive.
 *
 *   const env = createRuntimeEnv({ etcDir, dataDir, zone, ruleDefaults, cacheDefaults, confKey, log });
 *   const hub = new SourceHub(env);                      // one per process (shared streams)
 *   const rule = Rule.create(ruleJson, streams, env, hub); // validates; throws EngineError
 *   const run = await rule.start(onExit);                // one run: sources attached, sinks connecting
 *   run.metrics();                                       // the run's status keys (without the state fields)
 *   run.topo();                                          // GET /rules/{id}/topo
 *   await run.stop();                                    // closes the run
 *
 * The runtime keeps no rule state: a `Rule` is a validated definition, each `start` is a new run,
 * and stopping closes that run. Which run is current, the state names and last-will messages,
 * restarts, schedules and the order of start/stop calls belong to the host (the daemon's
 * server/lifecycle.ts; pipe mode runs one run and reports how it ended).
 *
 * Contract:
 * - `Rule.create` checks, in order, options (`Rule <id> has invalid options: …`), the SQL (parse
 *   errors as the parser words them), the streams it reads (`fail to get stream <s>, please check
 *   if stream is created`), planning errors, and every action (`sink <type> is not defined`,
 *   connector property errors, `fail to parse sink configuration: …`). The daemon adds its own
 *   prefixes (`invalid rule json: …`). `streams` holds every stream/table definition by name.
 * - `start(onExit)` plans a fresh run (metrics start from zero) and resolves with its handle once
 *   sources are attached and sinks are connecting; connectors connect asynchronously with backoff,
 *   so an unreachable broker leaves the run going with `connection_status` 0/−1. If starting fails
 *   the run is already closed and `start` rejects with the error (no `onExit` then).
 * - `RunHandle.stop(flushWindows)` stops reading, ends the topology, lets each sink drain for
 *   `env.sinkGraceMs`, saves sink caches (unless `cleanCacheAtStop`), closes connections. It is
 *   idempotent (every call gets the one closing), waits for a start still in progress, and the
 *   run's metrics stay readable afterwards.
 * - A run ends by itself when every source reaches EOF (it closes flushing its windows, then
 *   `onExit({ kind: "eof" })`) or on a failure at run time (not a record error: those are counted
 *   on the node and the run goes on): it closes, then `onExit({ kind: "error", message })` with
 *   the failure's text (eKuiper leaves the message empty; floe never does). A run the
 *   host stopped first reports nothing. `RunHandle.exit` keeps what was reported.
 * - `lost()` counts what the run lost: sink drops, evictions, unsent at stop, and what the previous
 *   run of the rule admitted (acknowledged) but left unsaved, from the acknowledgement ledger in
 *   store/ (that part is also the status key `source_<s>_0_records_lost_total`): the ledger is what
 *   carries a loss from one run to the next. `duplicates()` counts the MQTT redeliveries the run's
 *   sources admitted. Neither is a status key.
 */
import type { ByteBudget } from "../core/byte-budget.ts";
import { EngineError, ErrCode } from "../errors.ts";
import { parseSinkCommon, type SinkCommon } from "../sink/common.ts";
import { createSinkConnector } from "../connectors/sinks.ts";
import { SinkPipeline } from "../sink/pipeline.ts";
import { checkSinkFormat } from "../sink/payload.ts";
import { mergeProps } from "../config/props.ts";
import { checkTemplateBudget } from "../template/index.ts";
import { rateLimitOf, resolveSourceProps, selectorError, sourceType } from "../connectors/sources.ts";
import type { SourceConnector } from "../source/connector.ts";
import { isLookupTable, type StreamDef } from "../plan/streams.ts";
import { analyze } from "../plan/analyze.ts";
import { parseSharedSelect } from "../sql/shared-select.ts";
import type { SelectStatement } from "../sql/ast.ts";
import type { RuntimeEnv } from "./env.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import { parseRuleOptions, type RuleOptions } from "../plan/rule-options.ts";
import { Execution } from "./execution.ts";
import type { Peek } from "./peek.ts";
import { GRAPH_SELECT, planRuleGraph } from "./graph-plan.ts";
import type { SourceHub } from "./sources.ts";
import type { ScanTableContent } from "../ops/join.ts";
import type { ErrorReport } from "./error-report.ts";
import type { SinkNode } from "../core/sink.ts";
import type { TraceStrategy } from "./trace/rule-tracer.ts";

/** How a run ended by itself: every source at EOF, or a failure at run time with its text. */
export type RunExit = { readonly kind: "eof" } | { readonly kind: "error"; readonly message: string };

/** The parts of an eKuiper rule JSON the runtime reads (rules-and-sinks.md §1). */
export interface RuleJson {
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
  /** Pipe mode's stderr report of decode and row errors (execution.ts). */
  readonly errors?: ErrorReport;
  /** A group member's partition run: false once it may no longer act as the partition's owner; it then stores no checkpoint (so acknowledges nothing) and sends no result. */
  readonly fence?: () => boolean;
  /**
   * An event-time TUMBLINGWINDOW/HOPPINGWINDOW sends a Watermark of each window's end downstream
   * after the window's results (if any): the operators pass it on in order, behind rows still
   * spread across turns, so the sinks hear of the close after its rows — a two-stage rule's
   * partition tells the merge of a window it had no rows in.
   */
  readonly closeMarks?: boolean;
}

interface Action {
  readonly type: string;
  readonly index: number;
  readonly props: Record<string, unknown>;
  readonly common: SinkCommon;
  /** A graph rule's sink node name. */
  readonly node?: string;
}

/** A validated rule definition: stateless, it starts runs (see the contract above). */
export class Rule {
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

  /** Validates a rule definition (see the contract above). */
  static create(def: RuleJson, streams: ReadonlyMap<string, StreamDef>, env: RuntimeEnv, hub: SourceHub, host: RuleHostOptions = {}): Rule {
    const options = parseRuleOptions(def.id, def.options, env.ruleDefaults);
    if (def.graph !== undefined && def.graph !== null) {
      // Planned here to validate (sources, operators, sinks); each run plans again.
      const g = planRuleGraph(def.id, def.graph, !!def.temp, streams, options, env, () => Date.now(), () => false);
      const actions = g.sinks.map((k, i): Action => ({ type: k.type, index: i, node: k.node, props: k.props, common: parseSinkCommon(k.props, env.cacheDefaults) }));
      for (const a of actions) checkTemplateBudget(a.props);
      return new Rule(def.id, def.name ?? "", options, GRAPH_SELECT, streams, actions, env, hub, host, { json: def.graph, temp: !!def.temp });
    }
    const select = def.select ?? parseSharedSelect(def.sql, env.functions);
    analyze(select, streams, { functions: env.functions, sendMetaToSink: options.sendMetaToSink });
    const actions = parseActions(def.actions, env, def.id, host.extraSinks?.length ?? 0);
    for (const a of actions) checkTemplateBudget(a.props);
    return new Rule(def.id, def.name ?? "", options, select, streams, actions, env, hub, host);
  }

  /**
   * Starts a new run: plans it (fresh metrics, fresh sink connectors), opens sinks and lookup
   * tables, attaches the sources. Rejects with the planning or start error, the run then closed.
   */
  async start(onExit?: (exit: RunExit) => void): Promise<RunHandle> {
    const rateLimits = this.graph ? undefined : await this.rateLimits();
    const execution = new Execution(
      {
        id: this.id,
        rateLimits,
        select: this.select,
        graph: this.graph,
        streams: this.streams,
        options: this.options,
        sinks: () => this.actions.map((a) => this.pipeline(a)),
        extraSinks: this.host.extraSinks ?? [],
        defaultType: this.host.defaultType,
        connectors: this.host.connectors,
        errors: this.host.errors,
        fence: this.host.fence,
        closeMarks: this.host.closeMarks,
      },
      this.env,
      this.hub,
    );
    const handle = new RunHandle(this.id, execution, onExit);
    await handle.opened;
    return handle;
  }

  /** The rate limit (`interval`, rules-and-sinks.md §8.1) of each push source the rule reads, by stream; undefined: none has one. */
  private async rateLimits(): Promise<Map<string, number> | undefined> {
    const out = new Map<string, number>();
    for (const src of [this.select.from, ...this.select.joins.map((j) => j.source)]) {
      const def = this.streams.get(src.name);
      if (!def || isLookupTable(def) || this.host.connectors?.has(def.name)) continue;
      const type = sourceType(def, this.host.defaultType);
      let props: Record<string, unknown>;
      try {
        props = await resolveSourceProps(def, type, this.env);
      } catch {
        // Attaching the source reports it, after the sinks' own errors.
        continue;
      }
      const ms = rateLimitOf(type, props);
      if (ms !== undefined) out.set(def.name, ms);
    }
    return out.size > 0 ? out : undefined;
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
      schemas: this.env.schemas,
      // The env's own function (createRuntimeEnv holds it detached): no closure per sink.
      log: this.env.log,
      fence: this.host.fence,
    });
  }
}

/**
 * One run of a rule as its host holds it, the handle of an execution (execution.ts): the metrics,
 * topology and sinks of the run, and the one way to close it. No state names: the host knows
 * whether it is the current run.
 */
export class RunHandle {
  /** Resolves once the run is started; rejects with the start error (the run then closed itself). */
  readonly opened: Promise<void>;
  private startFailed = false;
  private closing: Promise<void> | undefined;
  private ended: RunExit | undefined;

  constructor(
    readonly id: string,
    private readonly execution: Execution,
    private readonly onExit: ((exit: RunExit) => void) | undefined,
  ) {
    execution.onAllEof = () => this.endBySelf({ kind: "eof" }, true);
    execution.onFatal = () => this.endBySelf({ kind: "error", message: execution.fatalMessage }, false);
    this.opened = execution.start().catch((e: unknown) => {
      this.startFailed = true;
      throw e;
    });
  }

  /** How the run ended by itself (undefined while it runs, and when the host stopped it first). */
  get exit(): RunExit | undefined {
    return this.ended;
  }

  /**
   * Closes the run (see the contract above); `flushWindows` (pipe mode's Ctrl-C) first processes
   * admitted records and emits open windows. Every call returns the same closing.
   */
  stop(flushWindows = false): Promise<void> {
    // A start still in progress finishes first; a failed start closed the run itself.
    this.closing ??= this.opened.then(
      () => this.execution.stop({ flushWindows }),
      () => undefined,
    );
    return this.closing;
  }

  /** EOF or a run-time failure: the run closes itself, then tells its host (unless the host closed it first). */
  private endBySelf(exit: RunExit, flushWindows: boolean): void {
    if (this.closing) return;
    this.ended = exit;
    const report = () => {
      if (!this.startFailed) this.onExit?.(exit);
    };
    void this.stop(flushWindows).then(report, report);
  }

  /** Every node's metrics in status order: sources, operators, sinks. */
  nodes(): readonly NodeMetrics[] {
    return this.execution.nodes();
  }

  /** What the run's buffered windows hold against the rule's `windowMaxRows`/`windowMaxBytes`. */
  windowBudget(): ByteBudget {
    return this.execution.windowBudget;
  }

  /** The run's status keys (rest-api.md §6.2) in order, without the state fields the host adds. */
  metrics(): Record<string, number | string> {
    const out: Record<string, number | string> = {};
    for (const n of this.execution.nodes()) for (const [k, v] of n.entries()) out[k] = v;
    return out;
  }

  /** Starts tracing the run with `strategy`, or stops it (undefined); a new run starts untraced. */
  trace(strategy: TraceStrategy | undefined): void {
    if (!this.closing) this.execution.trace(strategy);
  }

  /** Starts a data peek on the run, or ends it (undefined). */
  peek(p: Peek | undefined): void {
    if (!this.closing) this.execution.peek(p);
  }

  /** `GET /rules/{id}/topo` (rest-api.md §7.1). */
  topo(): { sources: string[]; edges: Record<string, string[]> } {
    return this.execution.topoJson();
  }

  /** The scan tables a join of the run holds and their rows; undefined once closing or when joining none. */
  scanTables(): ScanTableContent[] | undefined {
    return this.closing ? undefined : this.execution.topo.scanTables();
  }

  /** `PUT /rules/{id}/reset_state`: rewinds a rewindable source of the run. */
  resetState(stream: string, input: unknown): void {
    if (this.closing) throw new EngineError(`rule ${this.id} should be running when modify state`);
    this.execution.resetState(stream, input);
  }

  /** Records this run lost (sink drops, unsent at stop, late rows, and what the previous run left unsaved). */
  lost(): number {
    return this.execution.lost();
  }

  /** Redelivered messages (MQTT DUP) the run's sources admitted; a floe counter, not a status key. */
  duplicates(): number {
    let n = 0;
    for (const m of this.execution.nodes()) if (m.kind === "source") n += m.duplicates;
    return n;
  }

  /** Every sink delivered and confirmed all the results it was given (SinkPipeline.settled). */
  sinksSettled(): boolean {
    return this.sinks.every((p) => p.settled);
  }

  /** Processes no new input until the sinks are settled or `maxMs` passes (Execution.holdForSinks); then `resumeDrains`. */
  holdForSinks(maxMs: number): Promise<boolean> {
    return this.execution.holdForSinks(maxMs);
  }

  resumeDrains(): void {
    this.execution.resumeDrains();
  }

  /** The run's sink pipelines (tests, diagnostics). */
  get sinks(): readonly SinkPipeline[] {
    return this.execution.pipelines;
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
      const conn = createSinkConnector(type, merged, env);
      const common = parseSinkCommon(merged, env.cacheDefaults);
      // A bytes sink's format: a protobuf schemaId must resolve now, not at the first row.
      if (conn.bytes) checkSinkFormat(common, env.schemas);
      out.push({ type, index: base + i, props: merged, common });
    }
  });
  void ruleId;
  return out;
}
