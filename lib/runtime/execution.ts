/**
 * An execution: one run of a rule inside the runtime (start → stop), behind the handle its host
 * holds (rule.ts RunHandle). It plans the topology, opens the sink pipelines and lookup tables,
 * attaches one drain per source (drain.ts: the bus subscription drained into the topology while
 * every sink has room), keeps checkpoints (qos ≥ 1) and the source acknowledgements (acks.ts),
 * and stops: optionally flushing what was admitted and the open windows, then letting the sinks
 * drain within the grace period.
 */
import type { Level } from "../log.ts";
import { EngineError, errorText, failureText } from "../errors.ts";
import { ByteBudget } from "../core/byte-budget.ts";
import type { FuncEnv } from "../functions/registry.ts";
import type { SinkPipeline } from "../sink/pipeline.ts";
import type { SourceConnector } from "../source/connector.ts";
import { isByteSource, sourceType } from "../connectors/sources.ts";
import { openLookupTable } from "../connectors/lookups.ts";
import { planRule } from "../plan/plan-rule.ts";
import type { GraphPlan } from "../plan/graph.ts";
import { planRuleGraph } from "./graph-plan.ts";
import type { RulePlan } from "../plan/specs.ts";
import type { StreamDef } from "../plan/streams.ts";
import type { SelectStatement } from "../sql/ast.ts";
import { clauseExprs, some } from "../sql/walk.ts";
import { checkpointStore } from "../store/checkpoint.ts";
import { AckLedger, cacheDb } from "../store/sink-cache.ts";
import { WallClock } from "../ops/window/clock.ts";
import { Checkpointer, type InputHold, type SinkBarrier } from "./checkpoint.ts";
import { DrainHold } from "./drain-hold.ts";
import type { RuntimeEnv } from "./env.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import type { RuleOptions } from "../plan/rule-options.ts";
import type { Peek } from "./peek.ts";
import { messageWhere, type ErrorReport } from "./error-report.ts";
import type { AttachOptions, SourceHub } from "./sources.ts";
import { Topology } from "./topology.ts";
import type { SinkNode } from "../core/sink.ts";
import { RuleTracer, type TraceStrategy } from "./trace/rule-tracer.ts";
import { Acks } from "./acks.ts";
import { Drain, type DrainHost } from "./drain.ts";
import { RunEnv } from "./run-env.ts";
import { topoJson, type TopoJson } from "./topo-json.ts";
import { SharedEval, sharedKey } from "./shared-eval.ts";
import { DrainGroup } from "./drain-group.ts";
import { samePlan } from "./plan-share.ts";

/** What an execution runs: the rule as its host prepared it (rule.ts `Rule.start`). */
export interface ExecutionSpec {
  readonly id: string;
  readonly select: SelectStatement;
  /** A graph rule (graph-rules.md): planned by plan/graph.ts instead of `select`. */
  readonly graph?: { json: unknown; temp: boolean };
  readonly streams: ReadonlyMap<string, StreamDef>;
  readonly options: RuleOptions;
  /** Builds the run's sink pipelines (fresh connectors per run). */
  readonly sinks: () => SinkPipeline[];
  /** Host sinks placed before the actions (pipe mode's stdout). */
  readonly extraSinks: readonly SinkNode[];
  /** Type of a stream or table without TYPE: "stdin" in pipe mode; undefined in the daemon (mqtt / file). */
  readonly defaultType: string | undefined;
  /** Host-built connectors by stream name (pipe mode's stdin). */
  readonly connectors?: ReadonlyMap<string, SourceConnector>;
  /** Pipe mode's stderr report of decode and row errors, and of the failure that stops the rule. */
  readonly errors?: ErrorReport;
  /** The `interval` rate limit (ms) of push sources, by stream (rules-and-sinks.md §8.1). */
  readonly rateLimits?: ReadonlyMap<string, number>;
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

/**
 * Whether a run reads its sources' metadata: a `meta()` / `mqtt()` reference anywhere in the
 * SELECT, `sendMetaToSink`, a graph rule (its nodes' expressions), pipe mode's error report
 * (it names the topic). Otherwise the sources may leave it out (SourceContext.wantsMeta).
 */
function readsMeta(spec: ExecutionSpec): boolean {
  if (spec.graph || spec.errors?.wantsMeta || spec.options.sendMetaToSink) return true;
  const s = spec.select;
  const isMeta = (e: { kind: string }) => e.kind === "meta";
  return s.fields.some((f) => some(f.expr, isMeta)) || clauseExprs(s).some((e) => some(e, isMeta));
}

/** How long a stop holds the input for its sinks to deliver what they were given (`holdForSinks`, `stop`). */
export const HOLD_FOR_SINKS_MS = 1000;

/** Waits for `p`, at most `ms`; leaves no timer behind. */
async function within(p: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

export class Execution implements DrainHost {
  /** What the run reads of its spec once built (not its sink factory, SELECT, streams). */
  private readonly spec: Pick<ExecutionSpec, "id" | "options" | "defaultType" | "connectors" | "fence">;
  readonly clock = new WallClock();
  readonly topo: Topology;
  readonly plan: RulePlan;
  readonly graph: GraphPlan | undefined;
  readonly pipelines: SinkPipeline[];
  readonly sinkNodes: SinkNode[];
  private readonly drains: Drain[] = [];
  private eofs = 0;
  halted = false;
  /** The clock read once for the batch being drained (0 outside a drain: timers read the clock). */
  batchNow = 0;
  readonly startedAt: number;
  /** Called once when every source has ended (EOF). */
  onAllEof: (() => void) | undefined;
  /** Called once when the run fails at run time (the rule stops by error). */
  onFatal: ((e: unknown) => void) | undefined;
  /** The checkpoint coordinator (qos ≥ 1 only: qos 0 saves nothing and costs nothing). */
  private readonly checkpoints: Checkpointer | undefined;
  /** Pipe mode's error report (ExecutionSpec.errors). */
  readonly errors: ErrorReport | undefined;
  /** The run reads its sources' metadata (readsMeta). */
  private readonly readsMeta: boolean;
  /** The run's tracer while its tracing is started (rest-api.md §5); undefined: untraced. */
  tracer: RuleTracer | undefined = undefined;
  /** The drain running (undefined between drains: timers fire outside any record). */
  active: Drain | undefined;
  /** The source acknowledgements and their ledger. */
  private readonly acks: Acks;
  /** No operator holds state: what a drain took is durable once the sinks flushed. */
  private readonly stateless: boolean;
  /** What the rule's buffered windows hold against `windowMaxRows`/`windowMaxBytes` (ops/window/held-rows.ts). */
  readonly windowBudget: ByteBudget;

  constructor(
    spec: ExecutionSpec,
    private readonly env: RuntimeEnv,
    private readonly hub: SourceHub,
  ) {
    const clock = this.clock;
    const o = spec.options;
    this.spec = { id: spec.id, options: o, defaultType: spec.defaultType, connectors: spec.connectors, fence: spec.fence };
    this.startedAt = clock.now();
    const startedAt = this.startedAt;
    const now = () => this.now();
    const fenv: FuncEnv = { now, zone: env.zone, ruleId: spec.id, ruleStart: startedAt };
    const decoder = (def: StreamDef) => !spec.connectors?.has(def.name) && isByteSource(sourceType(def, spec.defaultType));
    const graph = spec.graph ? planRuleGraph(spec.id, spec.graph.json, spec.graph.temp, spec.streams, o, env, now, decoder, startedAt) : undefined;
    this.graph = graph;
    this.plan = graph
      ? { sources: graph.sources, ops: [], slots: 0 }
      : samePlan(planRule(spec, spec.streams, { env: fenv, functions: env.functions, zone: env.zone, ignoreCase: env.ignoreCase, decoder, rateLimit: (def) => spec.rateLimits?.get(def.name) }).plan, spec.select, o, env.ignoreCase);
    this.clock.onError = this.onSourceFail;
    this.pipelines = spec.sinks();
    for (const p of this.pipelines) p.clock = this;
    this.sinkNodes = [...spec.extraSinks, ...this.pipelines];
    const errors = spec.errors;
    this.errors = errors;
    this.readsMeta = readsMeta(spec);
    const windowBudget = (this.windowBudget = new ByteBudget(o.windowMaxBytes, o.windowMaxRows));
    this.topo = new Topology(this.plan, new RunEnv(this, o.sendError, clock, env.zone, windowBudget, spec.closeMarks), this.sinkNodes, graph);
    this.gates = [...this.sinkNodes, ...this.topo.planOps()];
    this.delivered = spec.fence !== undefined;
    // Graph rules keep no checkpoints yet: their state fingerprint is the SELECT's.
    if (o.qos >= 1 && !graph) {
      const log = (l: string, level?: Level) => env.log(l, level);
      const delivered = this.delivered;
      const pipelines = this.pipelines;
      const barrier: SinkBarrier = {
        given: () => pipelines.map((p) => p.given),
        passed: (marks) => pipelines.every((p, i) => p.safe(delivered) >= marks[i]!),
      };
      const input: InputHold = { hold: () => this.hold.hold("checkpoint"), release: () => this.hold.release("checkpoint") };
      this.checkpoints = new Checkpointer(spec.id, checkpointStore(env.dataDir), spec.select, o.windowEvaluator, log, spec.fence, barrier, input);
    }
    this.stateless = Object.keys(this.topo.snapshot()).length === 0;
    const journaled = spec.extraSinks.length === 0 && this.pipelines.length > 0 && this.pipelines.every((p) => p.journaled);
    const ledger = journaled && (this.stateless || (o.qos >= 1 && !graph)) ? new AckLedger(cacheDb(env.dataDir), spec.id) : undefined;
    this.acks = new Acks(spec.id, ledger, this.stateless, this.drains, this.pipelines, this.topo);
    this.commits = !this.acks.idle;
    // Shared evaluation (shared-eval.ts): a stateless daemon rule over one shared stream, nothing
    // keeping checkpoints or a ledger of what it took.
    const only = this.plan.sources.length === 1 ? this.plan.sources[0]! : undefined;
    const shares = only && !graph && !spec.connectors && !spec.fence && !spec.closeMarks && spec.extraSinks.length === 0 && !this.checkpoints && !ledger && this.stateless;
    this.sharedKey = shares ? sharedKey(spec.select, only.def, o, env.ignoreCase) : undefined;
  }

  /**
   * The group of rules this run shares its evaluation with (undefined: it evaluates alone); let
   * go of once the sources are attached (the group holds one copy of it for all its rules).
   */
  private sharedKey: string | undefined;

  /**
   * End of a drain: the sink caches write what was queued and the ledger what was admitted and
   * what is durable, in one transaction, before the sources acknowledge.
   */
  commit(): void {
    if (this.commits) this.acks.commit();
  }

  /** A drain's end has something to write (a ledger, a sink cache): Acks.idle. */
  private readonly commits: boolean;

  /**
   * The run keeps checkpoints of a state: its unshared late-acknowledging sources (JetStream)
   * acknowledge at each stored checkpoint instead of when the rule takes a message.
   */
  get checkpointAcks(): boolean {
    return this.checkpoints !== undefined && !this.stateless;
  }

  /** Read positions of the rewindable sources this run reads alone, by stream. */
  private offsets(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const i of this.drains) {
      const att = i.att;
      const o = att?.own?.offset?.(att.sub.length);
      if (o !== undefined) out[i.name] = o;
    }
    return out;
  }

  /**
   * Starts tracing with `strategy` (a fresh tracer: spans go to the env's trace hub), or stops it.
   * Runs between drains, so no message is half traced.
   */
  trace(strategy: TraceStrategy | undefined): void {
    const sink = this.env.traces;
    this.tracer = strategy !== undefined && sink !== undefined ? new RuleTracer(this.spec.id, strategy, sink) : undefined;
    // A traced rule takes its own messages (a drain group's leader hands them out untraced).
    if (this.tracer) for (const d of this.drains) d.group?.unpark(d);
    this.topo.trace(this.tracer);
  }

  /** Starts a data peek (runtime/peek.ts) on this run, or ends it (undefined); a new run starts without. */
  peek(p: Peek | undefined): void {
    // A peeked rule takes its own messages (its taps see what its own nodes pass on).
    if (p) for (const d of this.drains) d.group?.unpark(d);
    this.topo.peek(p);
  }

  /** `PUT /rules/{id}/reset_state`: rewinds the source of `stream` (rest-api.md). */
  resetState(stream: string, input: unknown): void {
    const drain = this.drains.find((i) => i.name === stream);
    if (!drain) throw new EngineError(`stream ${stream} not found in topo`);
    const c = drain.att?.own;
    if (!c?.rewind) throw new EngineError(`source ${stream} is not rewindable`);
    c.rewind(input);
  }

  /** Whatever can make the drains wait: sinks, lookup nodes, and operators with items waiting behind a spread. */
  private readonly gates: readonly Pick<SinkNode, "room" | "onRoom">[];

  /** A failure outside any record (a drain's own loop, a timer): the rule stops by error with its message. */
  fatal(e: unknown): void {
    if (this.halted) return;
    // What a drain group counted for this rule so far is its own; from here on it counts nothing.
    for (const d of this.drains) d.catchUp();
    this.halted = true;
    this.fatalMessage = failureText(e);
    // Another member leads the drain group once the drain running (perhaps this one's) is done.
    queueMicrotask(() => {
      for (const d of this.drains) if (d.group?.leader === d) this.leaveGroup(d);
    });
    if (this.errors) this.errors.fatal(this.fatalMessage);
    else this.env.log(`rule ${this.spec.id} stops by error: ${this.fatalMessage}`);
    this.onFatal?.(e);
  }

  /** The drain leaves its drain group and its shared evaluation. */
  private leaveGroup(d: Drain): void {
    d.group?.leave(d);
    d.group = undefined;
    d.shared?.close();
    d.shared = undefined;
  }

  /** The message of the failure that stopped the run (empty while it has not failed). */
  fatalMessage = "";

  /** Where the record being processed came from, for the error report ("" outside a record). */
  private where(): string {
    const i = this.active;
    const m = i?.current;
    return i && m ? messageWhere(i.name, m) : "";
  }

  now(): number {
    return this.batchNow || this.clock.now();
  }

  /** A record failed: pipe mode's error report hears of it, with where it came from. */
  rowError(message: string): void {
    this.errors?.row(this.where(), message);
  }

  /** Results the rule may still produce before a sink (or an asynchronous lookup's FIFO, or what waits behind a spread) would have to wait. */
  room(): number {
    let r = Infinity;
    for (const p of this.gates) {
      const x = p.room?.() ?? Infinity;
      if (x < r) r = x;
    }
    return r;
  }

  waitRoom(fn: () => void): void {
    for (const p of this.gates) if (p.room && p.room() <= 0) p.onRoom!(fn);
  }

  async start(): Promise<void> {
    const o = this.spec.options;
    const srcs = this.plan.sources;
    try {
      // The newest checkpoint is loaded before any source delivers (§5).
      const cp = this.checkpoints;
      const offsets = cp?.restore(this.topo);
      // A stateful rule with checkpoints and a keyed sink (sink/emission-keys.ts) keeps the
      // checkpoint's keys — or, with none, starts them from the rule's fingerprint as a run that
      // died before its first checkpoint did — only if every source replays what followed the
      // checkpoint; which is known once they are attached, so nothing is drained before.
      const keys = cp !== undefined && !this.stateless && this.pipelines.some((p) => p.keyed) ? cp : undefined;
      if (keys && !keys.restored) for (const p of this.pipelines) p.keysFrom(keys.fp);
      if (keys !== undefined) this.hold.hold("attach");
      this.acks.settle(this.env.dataDir, this.plan.sources, (l) => this.env.log(l));
      // Inside the try: a sink that cannot open (`connection <id> not existed`) closes the others.
      for (const p of this.pipelines) p.open();
      // Lookup tables answer from the first row on: open them before any source delivers.
      for (const op of this.topo.lookupOps()) op.attach(await openLookupTable(op.spec.table, this.env));
      for (const src of srcs) {
        const drain = new Drain(this, src.name, src.def);
        this.drains.push(drain);
        const node = this.topo.sourceMetrics(src.name)!;
        drain.node = node;
        drain.decoderNode = this.topo.decoderMetrics(src.name);
        drain.shared = SharedEval.of(this.sharedKey, this.topo, src.name);
        drain.att = await this.hub.attach(src.def, sourceType(src.def, this.spec.defaultType), this.attachOptions(drain, src.name, node, offsets?.get(src.name)));
        if (drain.shared) drain.group = DrainGroup.join(drain.att.groups, drain.shared.key, drain);
        if (drain.att.sub.length) drain.wake();
      }
      this.sharedKey = undefined;
      if (keys) this.releaseDrains(offsets!);
      // Only a run keeping checkpoints makes the callbacks (most rules keep none).
      const cps = this.checkpoints;
      if (cps) cps.start(o.checkpointInterval, this.topo, () => this.offsets(), () => this.acks.checkpointed());
    } catch (e) {
      await this.stop({ flushWindows: false });
      throw e instanceof EngineError ? e : new EngineError(errorText(e), undefined, { cause: e });
    }
  }

  /**
   * What the source hub is told of `drain`'s subscription. Made outside `start`: the hub keeps its
   * callbacks as long as the run reads, and they hold only what they use, not `start`'s frame.
   */
  private attachOptions(drain: Drain, stream: string, node: NodeMetrics, offset: unknown): AttachOptions {
    const o = this.spec.options;
    return {
      capacity: o.subscriberCapacity,
      policy: o.overflow,
      wake: drain.wake,
      node,
      share: (shared, counting) => {
        drain.node = shared;
        this.topo.shareSource(stream, shared, counting);
        // Now counting the stream's source node, which every rule shows: it follows its group eagerly.
        if (counting) drain.group?.recount(drain);
      },
      onEof: this.onSourceEof,
      onFail: this.onSourceFail,
      ref: `${this.spec.id}_${stream}_0`,
      connector: this.spec.connectors?.get(stream),
      offset,
      checkpointAcks: this.checkpointAcks,
      meta: this.readsMeta,
      filter: drain.indexFilter(this.env.ignoreCase),
    };
  }

  /** A source ended or failed (one of each for all the run's sources). */
  private readonly onSourceEof = (): void => this.sourceEof();
  private readonly onSourceFail = (e: unknown): void => this.fatal(e);

  /** The barrier counts results delivered, not cached (SinkPipeline.safe): a group's partition, restored by a member without this one's caches. */
  private readonly delivered: boolean;

  /** Why the drains take nothing now, if they do: attaching sources (`start`), `holdForSinks`, a checkpoint's wait. */
  private readonly hold = new DrainHold(this.drains);

  /** DrainHost.holdDrains. */
  get holdDrains(): boolean {
    return this.hold.held;
  }

  /**
   * Holds the drains — no new input is processed, so the sinks are given no new results — until
   * no operator spreads an item across turns (Topology.busy: it has results to give yet) and every
   * sink's checkpoint watermark reaches what it was given (SinkPipeline.safe: delivered, or in its
   * cache unless `delivered`), or `maxMs` passes; true when they did. The caller lets them go with
   * `resumeDrains` in any case. False at once while the run starts or is held for its sinks
   * already. A stop's final checkpoint is taken after it (`stop`), and so is a group partition's
   * at its release.
   */
  async holdForSinks(maxMs: number): Promise<boolean> {
    if (this.hold.has("attach") || this.hold.has("sinks")) return false;
    this.hold.hold("sinks");
    const until = Date.now() + maxMs;
    const delivered = this.delivered;
    while (this.topo.busy || !this.pipelines.every((p) => p.safe(delivered) >= p.given)) {
      if (Date.now() >= until || !this.hold.has("sinks")) return false;
      await Bun.sleep(2);
    }
    return true;
  }

  /** Ends a `holdForSinks`: the drains woken meanwhile run. */
  resumeDrains(): void {
    this.hold.release("sinks");
  }

  /**
   * The sources are attached: unless every one replays what followed the checkpoint (a restored
   * read position, or a JetStream consumer that acknowledges at checkpoints), the sinks' keys
   * take a fresh epoch, since this run's emissions are not the last run's. Then the drains go.
   */
  private releaseDrains(offsets: Map<string, unknown>): void {
    const replays = this.drains.every((i) => offsets.has(i.name) || (i.att?.holdsAcks === true && i.att.own?.checkpointed !== undefined));
    if (!replays) for (const p of this.pipelines) p.keysFresh();
    this.hold.release("attach");
  }

  private sourceEof(): void {
    if (++this.eofs >= this.plan.sources.length) {
      // Let the drains take what was admitted before the end, then report.
      queueMicrotask(() => this.onAllEof?.());
    }
  }

  /**
   * Stops reading, optionally processes what was admitted and closes open windows (pipe mode's
   * Ctrl-C), ends the topology, then lets every sink drain within the grace period.
   */
  async stop(opts: { flushWindows: boolean }): Promise<void> {
    const cp = this.checkpoints;
    // The final checkpoint reads the offsets before the sources are released; a flushing stop
    // (end of input) empties the windows, so there is no state worth keeping then. It counts what
    // the sinks were given: they first deliver it (or cache it) with the input held, within
    // HOLD_FOR_SINKS_MS, else it is not stored (Checkpointer.take) — a restart would not make
    // again what they then drop at close. The periodic checkpoints go on meanwhile.
    const final = cp !== undefined && this.spec.options.enableSaveStateBeforeStop && !opts.flushWindows && this.spec.fence?.() !== false;
    if (final && !this.halted) await this.holdForSinks(HOLD_FOR_SINKS_MS);
    cp?.stop();
    let saved = false;
    if (final && !this.halted) saved = cp.take(this.topo, () => this.offsets());
    if (saved) this.acks.savedAtStop();
    for (const i of this.drains) {
      this.leaveGroup(i);
      await i.att?.release();
    }
    if (opts.flushWindows) {
      for (const i of this.drains) i.drainAll();
      const until = this.topo
        .windowOps()
        .map((w) => w.flushTime())
        .filter((t): t is number => t !== undefined);
      if (until.length) this.clock.advance(Math.max(...until));
    }
    this.halted = true;
    // Rows waiting for an asynchronous lookup still reach the sinks, within the grace period.
    await within(this.topo.settle(), this.env.sinkGraceMs);
    // Read before the lookups detach, which drops what still waits.
    const idle = this.acks.lookupsIdle();
    this.topo.end();
    for (const op of this.topo.lookupOps()) await op.detach();
    this.clock.stop();
    await Promise.all(this.pipelines.map((p) => p.close(this.env.sinkGraceMs)));
    // What the run admitted and left undone (released unread, state not saved) is counted at the next start.
    this.acks.closed((this.stateless || opts.flushWindows || saved) && idle);
  }

  /** Metrics of every node: sources, operators (plan, then sink helpers), sinks (rest-api.md §6.2). */
  nodes(): NodeMetrics[] {
    for (const d of this.drains) d.catchUp();
    const all = this.topo.nodes();
    return [...all.filter((n) => n.kind === "source"), ...all.filter((n) => n.kind === "op"), ...all.filter((n) => n.kind === "sink")];
  }

  /** Records lost in this run: sink drops, unsent at stop, late rows, and what the last run lost unsaved. */
  lost(): number {
    let n = this.topo.dropped() + this.acks.restoredLost;
    for (const p of this.pipelines) n += p.lost;
    return n;
  }

  /** `GET /rules/{id}/topo` (rest-api.md §7.1). */
  topoJson(): TopoJson {
    return this.topo.graphTopo ?? topoJson(this.plan, this.sinkNodes);
  }
}
