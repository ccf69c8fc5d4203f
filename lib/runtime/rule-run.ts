/**
 * One run of a rule (start → stop): the planned topology, one inlet per source draining that
 * source's bus subscription into the topology, and the sink pipelines. An inlet drains only while
 * every sink has room, so a slow sink stops the inlet, the subscription fills, the bus refuses
 * the source, and the source stops reading: backpressure end to end with bounded queues.
 */
import type { Level } from "../log.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { EngineError, errorText, failureText, RowError } from "../errors.ts";
import { Tuple } from "../expr/row.ts";
import { ByteBudget } from "../core/byte-budget.ts";
import type { Obj } from "../value/values.ts";
import type { FuncEnv } from "../functions/registry.ts";
import type { Decoder } from "../formats/decode.ts";
import { SinkPipeline } from "../sink/pipeline.ts";
import type { SourceMessage } from "../source/message.ts";
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
import { Checkpointer } from "./checkpoint.ts";
import { memoryGovernor } from "./memory.ts";
import type { RuntimeEnv } from "./env.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import type { RuleOptions } from "../plan/rule-options.ts";
import { coerceToSchema } from "./schema-coerce.ts";
import type { Peek } from "./peek.ts";
import { messageWhere, type ErrorReport } from "./error-report.ts";
import type { AttachOptions, Attachment, SourceHub } from "./sources.ts";
import type { SkipTarget } from "./predicate-index.ts";
import { Topology } from "./topology.ts";
import type { SinkNode } from "../core/sink.ts";
import { messageData } from "./trace/data.ts";
import { parseTraceparent } from "./trace/ids.ts";
import { RuleTracer, type TraceStrategy } from "./trace/rule-tracer.ts";

/** Records an inlet moves into the topology per step. */
const STEP = 256;
/**
 * The time one drain may run before the rest of the subscription waits for a later event-loop
 * turn, with timers, sockets and the other rules served between: a drain taking everything
 * queued ran 15–46 ms once a backlog had built up (W4 at 50k msg/s).
 */
const DRAIN_MS = 4;
/**
 * The time an operator may spend on one item per event-loop turn (OpEnv.turnMs): a window of
 * 10,000 groups is projected over several turns, with sources and other rules served between.
 */
const TURN_MS = 2;

export interface RunSpec {
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
}

class Inlet {
  private readonly buf: SourceMessage[] = [];
  private scheduled = false;
  /** Woken while the run held its drains (RuleRun.holdDrains): drains once they are let go. */
  deferred = false;
  att: Attachment | undefined;
  /** The source node: `buffer_length` shows the subscription's occupancy. */
  node!: NodeMetrics;
  /** The `<i>_decoder` node of a byte source. */
  decoderNode: NodeMetrics | undefined;
  private decoded = 0;
  /** The record being processed (pipe mode's error report locates row errors by it). */
  current: SourceMessage | null = null;
  /** Messages taken from the subscription into the topology. */
  taken = 0;
  /** Of the messages taken, how many were durable at the last ledger write. */
  covered = 0;
  readonly wake = (): void => {
    if (this.scheduled) return;
    if (this.run.holdDrains) {
      this.deferred = true;
      return;
    }
    this.scheduled = true;
    queueMicrotask(this.drain);
  };

  constructor(
    private readonly run: RuleRun,
    readonly name: string,
    private readonly def: StreamDef,
  ) {}

  readonly drain = (): void => {
    this.scheduled = false;
    const att = this.att;
    if (!att) return;
    const sub = att.sub;
    const run = this.run;
    const buf = this.buf;
    // One clock read per drain: every record of the batch arrived in the same read.
    run.batchNow = run.clock.now();
    memoryGovernor.check();
    run.active = this;
    try {
      this.loop(sub, run, buf);
      // The sink caches write through what this drain queued before the source's acknowledgements
      // go out: they are answered in microtasks queued behind this one.
      run.commit();
    } catch (e) {
      // Record errors are caught at the operators; anything reaching here stops the rule.
      run.fatal(e);
    } finally {
      run.batchNow = 0;
      run.active = undefined;
      this.current = null;
    }
  };

  private loop(sub: Attachment["sub"], run: RuleRun, buf: SourceMessage[]): void {
    const until = performance.now() + DRAIN_MS;
    while (sub.length > 0 && !run.halted) {
      const room = run.room();
      if (room <= 0) {
        this.node.bufferLength = sub.length;
        run.waitRoom(this.wake);
        return;
      }
      const n = sub.take(buf, Math.min(room, STEP));
      this.taken += n;
      // The source node's latency: the sampled wait of a record in the subscription (bus.ts).
      this.node.processLatencyUs = sub.latencyUs;
      this.processAll(buf, n);
      buf.length = 0;
      if (sub.length > 0 && performance.now() >= until) {
        this.scheduled = true;
        setImmediate(this.drain);
        break;
      }
    }
    this.node.bufferLength = sub.length;
  }

  /**
   * What a shared stream's predicate index needs to answer this rule's WHERE for it, counting a
   * rejected message as taken (undefined: the rule evaluates every message itself).
   */
  indexFilter(fold: boolean): AttachOptions["filter"] {
    const r = this.run.topo.rejectable(this.name);
    if (!r) return undefined;
    const run = this.run;
    const target: SkipTarget = {
      skippable: () => !run.halted && run.tracer === undefined,
      skipped: (now) => {
        this.taken++;
        r.skipped(now);
      },
    };
    return { where: r.where, fold, target };
  }

  /**
   * Messages the subscription admitted (a push source answers after admission) less those it
   * evicted (drop-oldest, counted apart): the ones taken and the ones still waiting.
   */
  acked(): number {
    const att = this.att;
    // A source acknowledging late (JetStream) acknowledged only what is covered (checkpoints) or taken.
    if (att?.holdsAcks) return att.own?.checkpointed && this.run.checkpointAcks ? this.covered : this.taken;
    return this.taken + (att?.sub.length ?? 0);
  }

  /**
   * The rule's outer error boundary, per message: what escapes the operators' own boundaries
   * (a failure between the decoder and the first node) fails that message only, counted on the
   * source node. One try per batch, re-entered after a failure: nothing per message.
   */
  processAll(buf: readonly SourceMessage[], n: number): void {
    // Tracing is read once per batch: an untraced rule takes the plain loop.
    const tracer = this.run.tracer;
    let i = 0;
    while (i < n) {
      try {
        if (tracer === undefined) for (; i < n; i++) this.process(buf[i]!);
        else for (; i < n; i++) this.processTraced(buf[i]!, tracer);
      } catch (e) {
        const text = failureText(e);
        this.node.exception(text, this.run.now());
        this.run.errors?.row(messageWhere(this.name, buf[i]!), text);
        i++;
      }
    }
  }

  /**
   * One message of a traced rule: the root span `source_<stream>` (continuing the trace context
   * the message arrived with) is open while the message is decoded and pushed through the
   * topology, whose traced nodes open its children.
   */
  private processTraced(m: SourceMessage, t: RuleTracer): void {
    const span = t.beginMessage("source_" + this.name, parseTraceparent(m.traceparent ?? metaTraceparent(m.meta)), messageData(m.payload, m.rows, t.memo));
    if (span === null) {
      this.process(m);
      return;
    }
    const dn = this.decoderNode;
    const failures = dn ? dn.exceptions : 0;
    t.current = span;
    try {
      this.process(m);
    } finally {
      t.current = null;
      if (dn && dn.exceptions > failures) span.attributes.error = dn.lastException;
      t.close(span);
    }
  }

  process(m: SourceMessage): void {
    const topo = this.run.topo;
    const dec: Decoder | null = this.att!.decoder;
    const now = this.run.now();
    this.current = m;
    let rows: Obj | Obj[];
    if (m.payload !== null && dec && m.decodedBy === dec) {
      // Decoded once for all the rules of a shared stream.
      rows = m.decoded!;
      const dn = this.decoderNode;
      if (dn !== undefined && (++this.decoded & 63) === 1) dn.processLatencyUs = this.att!.decodeLatency.us;
    } else if (m.payload !== null && dec) {
      // The decoder node's latency: one payload in 64 is timed.
      const dn = this.decoderNode;
      const timed = dn !== undefined && (++this.decoded & 63) === 1;
      const t0 = timed ? performance.now() : 0;
      try {
        const decoded = dec(m.payload);
        rows = decoded;
        // The rules after this one on a shared stream (one decoder for all) reuse the rows.
        m.decoded = decoded;
        m.decodedBy = dec;
        if (timed) dn.processLatencyUs = this.att!.decodeLatency.us = Math.round((performance.now() - t0) * 1000);
      } catch (e) {
        // Any decoder failure is a decode error of this message (counted; the rule goes on).
        const text = failureText(e);
        topo.sourceError(this.name, text, m.payload);
        this.run.errors?.decode(messageWhere(this.name, m), text);
        return;
      }
    } else rows = m.rows ?? {};
    const fields = dec ? null : this.def.fields;
    if (Array.isArray(rows)) {
      // A table counts one record per batch it reads (eKuiper's scan tables); a stream one per row.
      const perBatch = this.def.kind === "table";
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!;
        topo.ingest(this.name, new Tuple(fields ? coerceToSchema(r, fields) : r, m.meta, now, this.name), 1, !perBatch || i === 0);
      }
    } else topo.ingest(this.name, new Tuple(fields ? coerceToSchema(rows, fields) : rows, m.meta, now, this.name));
  }
}

/**
 * Whether a run reads its sources' metadata: a `meta()` / `mqtt()` reference anywhere in the
 * SELECT, `sendMetaToSink`, a graph rule (its nodes' expressions), pipe mode's error report
 * (it names the topic). Otherwise the sources may leave it out (SourceContext.wantsMeta).
 */
function readsMeta(spec: RunSpec): boolean {
  if (spec.graph || spec.errors?.wantsMeta || spec.options.sendMetaToSink) return true;
  const s = spec.select;
  const isMeta = (e: { kind: string }) => e.kind === "meta";
  return s.fields.some((f) => some(f.expr, isMeta)) || clauseExprs(s).some((e) => some(e, isMeta));
}

/** An MQTT v5 message's `traceparent` user property (rules-and-sinks.md §9.1). */
function metaTraceparent(meta: Obj | null): unknown {
  const p = meta?.properties;
  return p !== null && typeof p === "object" && !Array.isArray(p) ? (p as Obj).traceparent : undefined;
}

/** Waits for `p`, at most `ms`; leaves no timer behind. */
async function within(p: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

export class RuleRun {
  readonly clock = new WallClock();
  readonly topo: Topology;
  readonly plan: RulePlan;
  readonly graph: GraphPlan | undefined;
  readonly pipelines: SinkPipeline[];
  readonly sinkNodes: SinkNode[];
  private readonly inlets: Inlet[] = [];
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
  /** Pipe mode's error report (RunSpec.errors). */
  readonly errors: ErrorReport | undefined;
  /** The run reads its sources' metadata (readsMeta). */
  private readonly readsMeta: boolean;
  /** The run's tracer while its tracing is started (rest-api.md §5); undefined: untraced. */
  tracer: RuleTracer | undefined = undefined;
  /** The inlet draining (undefined between drains: timers fire outside any record). */
  active: Inlet | undefined;
  /**
   * The acknowledgement ledger, kept when every sink is journaled (cache on, no alter queue) and
   * the rule's state is either nothing or covered by checkpoints (qos ≥ 1).
   */
  private readonly ledger: AckLedger | undefined;
  /** No operator holds state: what a drain took is durable once the sinks flushed. */
  private readonly stateless: boolean;
  /** Messages the previous run lost, counted at this run's start from the ledger. */
  private restoredLost = 0;
  /** What the rule's buffered windows hold against `windowMaxRows`/`windowMaxBytes` (ops/window/held-rows.ts). */
  readonly windowBudget: ByteBudget;

  constructor(
    private readonly spec: RunSpec,
    private readonly env: RuntimeEnv,
    private readonly hub: SourceHub,
  ) {
    const clock = this.clock;
    const o = spec.options;
    this.startedAt = clock.now();
    const startedAt = this.startedAt;
    const now = () => this.now();
    const fenv: FuncEnv = { now, zone: env.zone, ruleId: spec.id, ruleStart: startedAt };
    const decoder = (def: StreamDef) => !spec.connectors?.has(def.name) && isByteSource(sourceType(def, spec.defaultType));
    const graph = spec.graph ? planRuleGraph(spec.id, spec.graph.json, spec.graph.temp, spec.streams, o, env, now, decoder, startedAt) : undefined;
    this.graph = graph;
    this.plan = graph
      ? { sources: graph.sources, ops: [], slots: 0 }
      : planRule(spec, spec.streams, { env: fenv, functions: env.functions, zone: env.zone, ignoreCase: env.ignoreCase, decoder, rateLimit: (def) => spec.rateLimits?.get(def.name) }).plan;
    this.clock.onError = (e) => this.fatal(e);
    this.pipelines = spec.sinks();
    for (const p of this.pipelines) p.clock = now;
    this.sinkNodes = [...spec.extraSinks, ...this.pipelines];
    const errors = spec.errors;
    this.errors = errors;
    this.readsMeta = readsMeta(spec);
    const onRowError = errors ? (m: string) => errors.row(this.where(), m) : undefined;
    const windowBudget = (this.windowBudget = new ByteBudget(o.windowMaxBytes, o.windowMaxRows));
    this.topo = new Topology(this.plan, { now, sendError: o.sendError, clock, zone: env.zone, onRowError, turnMs: TURN_MS, windowBudget }, this.sinkNodes, graph);
    this.gates = [...this.sinkNodes, ...this.topo.lookupOps()];
    // Graph rules keep no checkpoints yet: their state fingerprint is the SELECT's.
    if (o.qos >= 1 && !graph) {
      const log = (l: string, level?: Level) => env.log(l, level);
      this.checkpoints = new Checkpointer(spec.id, checkpointStore(env.dataDir), spec.select, o.windowEvaluator, log, spec.fence);
    }
    this.stateless = Object.keys(this.topo.snapshot()).length === 0;
    const journaled = spec.extraSinks.length === 0 && this.pipelines.length > 0 && this.pipelines.every((p) => p.journaled);
    this.ledger = journaled && (this.stateless || (o.qos >= 1 && !graph)) ? new AckLedger(cacheDb(env.dataDir), spec.id) : undefined;
  }

  /**
   * End of a drain: the sink caches write what was queued and the ledger what was admitted and
   * what is durable, in one transaction, before the sources acknowledge.
   */
  commit(): void {
    const l = this.ledger;
    if (!l) {
      for (const p of this.pipelines) p.flush();
      return;
    }
    l.tx(() => {
      for (const p of this.pipelines) p.flush();
      if (this.stateless && this.lookupsIdle()) for (const i of this.inlets) i.covered = i.taken;
      for (const i of this.inlets) l.write(i.name, i.acked(), i.covered);
    });
  }

  /**
   * No row waits for an asynchronous lookup: those rows are in no sink cache and no checkpoint,
   * so what was taken is durable only when none waits.
   */
  private lookupsIdle(): boolean {
    for (const op of this.topo.lookupOps()) if (op.queued() > 0) return false;
    return true;
  }

  /**
   * The run keeps checkpoints of a state: its unshared late-acknowledging sources (JetStream)
   * acknowledge at each stored checkpoint instead of when the rule takes a message.
   */
  get checkpointAcks(): boolean {
    return this.checkpoints !== undefined && !this.stateless;
  }

  /** A checkpoint was stored: everything taken so far is in it (stateful rules). */
  private readonly checkpointed = (): void => {
    if (!this.lookupsIdle()) return;
    // Rows waiting for an asynchronous lookup are in no checkpoint: their messages wait for the next one.
    for (const i of this.inlets) i.att?.own?.checkpointed?.();
    const l = this.ledger;
    if (!l) return;
    l.tx(() => {
      for (const i of this.inlets) {
        i.covered = i.taken;
        l.write(i.name, i.acked(), i.covered);
      }
    });
  };

  /**
   * Counts what the previous run admitted and did not make durable, then starts a fresh ledger
   * (read even when this run keeps none: the rule may have changed since).
   */
  private settleLedger(): void {
    const dir = this.env.dataDir;
    const l = this.ledger ?? (existsSync(join(dir, "cache.db")) ? new AckLedger(cacheDb(dir), this.spec.id) : undefined);
    if (!l) return;
    for (const r of l.rows()) {
      const lost = Math.max(0, r.acked - r.covered);
      const node = this.topo.sourceMetrics(r.stream);
      if (node) node.recordsLost = Math.max(0, node.recordsLost) + lost;
      if (lost === 0) continue;
      this.restoredLost += lost;
      this.env.log(
        `rule ${this.spec.id}: ${lost} message(s) of stream ${r.stream} acknowledged before the last stop were lost (neither in the sink cache nor in a checkpoint)`,
      );
    }
    if (this.ledger) {
      for (const src of this.plan.sources) {
        const node = this.topo.sourceMetrics(src.name);
        if (node && node.recordsLost < 0) node.recordsLost = 0;
      }
    }
    l.clear();
  }

  /** Read positions of the rewindable sources this run reads alone, by stream. */
  private readonly offsets = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const i of this.inlets) {
      const att = i.att;
      const o = att?.own?.offset?.(att.sub.length);
      if (o !== undefined) out[i.name] = o;
    }
    return out;
  };

  /**
   * Starts tracing with `strategy` (a fresh tracer: spans go to the env's trace hub), or stops it.
   * Runs between drains, so no message is half traced.
   */
  trace(strategy: TraceStrategy | undefined): void {
    const sink = this.env.traces;
    this.tracer = strategy !== undefined && sink !== undefined ? new RuleTracer(this.spec.id, strategy, sink) : undefined;
    this.topo.trace(this.tracer);
  }

  /** Starts a data peek (runtime/peek.ts) on this run, or ends it (undefined); a new run starts without. */
  peek(p: Peek | undefined): void {
    this.topo.peek(p);
  }

  /** `PUT /rules/{id}/reset_state`: rewinds the source of `stream` (rest-api.md). */
  resetState(stream: string, input: unknown): void {
    const inlet = this.inlets.find((i) => i.name === stream);
    if (!inlet) throw new EngineError(`stream ${stream} not found in topo`);
    const c = inlet.att?.own;
    if (!c?.rewind) throw new EngineError(`source ${stream} is not rewindable`);
    c.rewind(input);
  }

  /** Whatever can make the inlets wait: sinks and lookup nodes. */
  private readonly gates: readonly Pick<SinkNode, "room" | "onRoom">[];

  /** A failure outside any record (the inlet's own loop, a timer): the rule stops by error with its message. */
  fatal(e: unknown): void {
    if (this.halted) return;
    this.halted = true;
    this.fatalMessage = failureText(e);
    if (this.errors) this.errors.fatal(this.fatalMessage);
    else this.env.log(`rule ${this.spec.id} stops by error: ${this.fatalMessage}`);
    this.onFatal?.(e);
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

  /** Results the rule may still produce before a sink (or an asynchronous lookup's FIFO) would have to wait. */
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
      this.holdDrains = keys !== undefined;
      this.settleLedger();
      // Inside the try: a sink that cannot open (`connection <id> not existed`) closes the others.
      for (const p of this.pipelines) p.open();
      // Lookup tables answer from the first row on: open them before any source delivers.
      for (const op of this.topo.lookupOps()) op.attach(await openLookupTable(op.spec.table, this.env));
      for (const src of srcs) {
        const inlet = new Inlet(this, src.name, src.def);
        this.inlets.push(inlet);
        const node = this.topo.sourceMetrics(src.name)!;
        inlet.node = node;
        inlet.decoderNode = this.topo.decoderMetrics(src.name);
        inlet.att = await this.hub.attach(src.def, sourceType(src.def, this.spec.defaultType), {
          capacity: o.subscriberCapacity,
          policy: o.overflow,
          wake: inlet.wake,
          node,
          share: (shared, counting) => {
            inlet.node = shared;
            this.topo.shareSource(src.name, shared, counting);
          },
          onEof: () => this.sourceEof(),
          onFail: (e) => this.fatal(e),
          ref: `${this.spec.id}_${src.name}_0`,
          connector: this.spec.connectors?.get(src.name),
          offset: offsets?.get(src.name),
          checkpointAcks: this.checkpointAcks,
          meta: this.readsMeta,
          filter: inlet.indexFilter(this.env.ignoreCase),
        });
        if (inlet.att.sub.length) inlet.wake();
      }
      if (keys) this.releaseDrains(offsets!);
      this.checkpoints?.start(o.checkpointInterval, this.topo, this.offsets, this.checkpointed);
    } catch (e) {
      await this.stop({ flushWindows: false });
      throw e instanceof EngineError ? e : new EngineError(errorText(e), undefined, { cause: e });
    }
  }

  /** Drains are held while the sources attach (see `start`). */
  holdDrains = false;

  /**
   * The sources are attached: unless every one replays what followed the checkpoint (a restored
   * read position, or a JetStream consumer that acknowledges at checkpoints), the sinks' keys
   * take a fresh epoch, since this run's emissions are not the last run's. Then the drains go.
   */
  private releaseDrains(offsets: Map<string, unknown>): void {
    const replays = this.inlets.every((i) => offsets.has(i.name) || (i.att?.holdsAcks === true && i.att.own?.checkpointed !== undefined));
    if (!replays) for (const p of this.pipelines) p.keysFresh();
    this.holdDrains = false;
    for (const i of this.inlets) {
      if (!i.deferred) continue;
      i.deferred = false;
      i.wake();
    }
  }

  private sourceEof(): void {
    if (++this.eofs >= this.plan.sources.length) {
      // Let the inlets drain what was admitted before the end, then report.
      queueMicrotask(() => this.onAllEof?.());
    }
  }

  /** Drains what the subscriptions hold into the topology (ignoring sink room), for a flushing stop. */
  private drainAll(): void {
    for (const i of this.inlets) {
      const att = i.att;
      if (!att) continue;
      const buf: SourceMessage[] = [];
      this.active = i;
      while (att.sub.length) {
        const n = att.sub.take(buf, STEP);
        i.taken += n;
        i.processAll(buf, n);
        buf.length = 0;
      }
      this.active = undefined;
      i.current = null;
    }
  }

  /**
   * Stops reading, optionally processes what was admitted and closes open windows (pipe mode's
   * Ctrl-C), ends the topology, then lets every sink drain within the grace period.
   */
  async stop(opts: { flushWindows: boolean }): Promise<void> {
    const cp = this.checkpoints;
    cp?.stop();
    // The final checkpoint reads the offsets before the sources are released; a flushing stop
    // (end of input) empties the windows, so there is no state worth keeping then.
    let saved = false;
    if (cp && this.spec.options.enableSaveStateBeforeStop && !opts.flushWindows && !this.halted) saved = cp.take(this.topo, this.offsets);
    if (saved && this.lookupsIdle()) for (const i of this.inlets) i.att?.own?.checkpointed?.();
    for (const i of this.inlets) await i.att?.release();
    if (opts.flushWindows) {
      this.drainAll();
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
    const idle = this.lookupsIdle();
    this.topo.end();
    for (const op of this.topo.lookupOps()) await op.detach();
    this.clock.stop();
    await Promise.all(this.pipelines.map((p) => p.close(this.env.sinkGraceMs)));
    // What the run admitted and left undone (released unread, state not saved) is counted at the next start.
    const l = this.ledger;
    if (l) {
      const done = (this.stateless || opts.flushWindows || saved) && idle;
      l.tx(() => {
        for (const i of this.inlets) {
          if (done) i.covered = i.taken;
          l.write(i.name, i.acked(), i.covered);
        }
      });
    }
  }

  /** Metrics of every node: sources, operators (plan, then sink helpers), sinks (rest-api.md §6.2). */
  nodes(): NodeMetrics[] {
    const all = this.topo.nodes();
    return [...all.filter((n) => n.kind === "source"), ...all.filter((n) => n.kind === "op"), ...all.filter((n) => n.kind === "sink")];
  }

  /** Records lost in this run: sink drops, unsent at stop, late rows, and what the last run lost unsaved. */
  lost(): number {
    let n = this.topo.dropped() + this.restoredLost;
    for (const p of this.pipelines) n += p.lost;
    return n;
  }

  /** `GET /rules/{id}/topo` (rest-api.md §7.1). */
  topoJson(): { sources: string[]; edges: Record<string, string[]> } {
    if (this.topo.graphTopo) return this.topo.graphTopo;
    const edges = new Map<string, string[]>();
    const add = (a: string, b: string) => {
      const l = edges.get(a);
      if (l) l.push(b);
      else edges.set(a, [b]);
    };
    const ops = this.plan.ops.map((o) => "op_" + o.name);
    const sinkHeads: string[][] = this.sinkNodes.map((s) => s.metrics.map((m) => `${m.kind}_${m.name}`));
    const first = ops[0] ?? sinkHeads.map((h) => h[0]!);
    const sources: string[] = [];
    for (const src of this.plan.sources) {
      const chain = ["source_" + src.name, ...src.helpers.map((h) => "op_" + h.name)];
      sources.push(chain[0]!);
      for (let i = 0; i + 1 < chain.length; i++) add(chain[i]!, chain[i + 1]!);
      const last = chain[chain.length - 1]!;
      for (const f of Array.isArray(first) ? first : [first]) add(last, f);
    }
    for (let i = 0; i + 1 < ops.length; i++) add(ops[i]!, ops[i + 1]!);
    const lastOp = ops[ops.length - 1];
    for (const chain of sinkHeads) {
      if (lastOp) add(lastOp, chain[0]!);
      for (let i = 0; i + 1 < chain.length; i++) add(chain[i]!, chain[i + 1]!);
    }
    const out: Record<string, string[]> = {};
    for (const k of [...edges.keys()].sort()) out[k] = edges.get(k)!;
    return { sources, edges: out };
  }
}
