/**
 * One source of an execution (execution.ts): its bus subscription, drained into the topology
 * through the stream's inlet (inlet.ts) a slice per event-loop turn, while every sink has room.
 * A slow sink stops the drain, the subscription fills, the bus refuses the source, and the source
 * stops reading: backpressure end to end with bounded queues. So does an operator holding items
 * behind a long spread (Operator.room). Counts what it took, for the source acknowledgements
 * (acks.ts).
 */
import { failureText } from "../errors.ts";
import type { Obj } from "../value/values.ts";
import type { Decoder } from "../formats/decode.ts";
import type { SourceMessage } from "../source/message.ts";
import type { StreamDef } from "../plan/streams.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import { memoryGovernor } from "./memory.ts";
import { messageWhere, type ErrorReport } from "./error-report.ts";
import type { AttachOptions, Attachment } from "./sources.ts";
import { rejectable, type SkipTarget } from "./predicate-index.ts";
import type { GroupTally } from "./group-tally.ts";
import type { Item } from "../core/item.ts";
import type { Topology } from "./topology.ts";
import { Inlet } from "./inlet.ts";
import type { SharedEval } from "./shared-eval.ts";
import type { DrainGroup, GroupMember } from "./drain-group.ts";
import { messageData } from "./trace/data.ts";
import { parseTraceparent } from "./trace/ids.ts";
import type { RuleTracer } from "./trace/rule-tracer.ts";
// How long a drain runs per turn (its own time, and the event-loop turn's shared one), and the
// records between its looks at the clock: the turn budget.
import { DRAIN_MS, DRAIN_STEP as STEP, loopDeadline } from "../core/turn.ts";

/** What a drain needs of its execution (execution.ts). */
export interface DrainHost {
  readonly clock: { now(): number };
  readonly topo: Topology;
  /** Pipe mode's error report (ExecutionSpec.errors). */
  readonly errors: ErrorReport | undefined;
  /** The tracer while the rule is traced; undefined: untraced. */
  readonly tracer: RuleTracer | undefined;
  /** The execution stopped reading (stopping, or failed). */
  readonly halted: boolean;
  /** Drains are held while the sources attach, a stop holds the input for its sinks, a checkpoint waits for a spread to end (Execution). */
  readonly holdDrains: boolean;
  /** Late-acknowledging sources acknowledge at stored checkpoints (Execution.checkpointAcks). */
  readonly checkpointAcks: boolean;
  /** The clock read once for the batch being drained (0 outside a drain: timers read the clock). */
  batchNow: number;
  /** The drain running (undefined between drains: timers fire outside any record). */
  active: Drain | undefined;
  now(): number;
  /** Results the rule may still produce before a sink (or a lookup's FIFO, or what waits behind a spread) would have to wait. */
  room(): number;
  /** Calls `fn` once there is room again. */
  waitRoom(fn: () => void): void;
  /** End of a drain: sink caches and the acknowledgement ledger write before the sources acknowledge. */
  commit(): void;
  /** A failure outside any record: the rule stops by error. */
  fatal(e: unknown): void;
}

/**
 * The drains woken since the last run of `runDue`, in wake order: one microtask drains them all,
 * instead of one task per rule (a shared stream wakes each of its rules for every admitted
 * batch). The order is the one their own microtasks had: a bus wakes its subscribers in one
 * synchronous pass, and whatever a drain queues runs after the last of them, as it did behind
 * their tasks. Drains woken while `runDue` runs wait for the next one.
 */
let due: Drain[] = [];
let spare: Drain[] = [];
let dueScheduled = false;

function runDue(): void {
  const list = due;
  due = spare;
  spare = list;
  dueScheduled = false;
  // One look at the memory governor per batch of work: the drains of one turn are one batch.
  memoryGovernor.check();
  for (let i = 0; i < list.length; i++) {
    try {
      list[i]!.drain();
    } catch (e) {
      // A drain catches its own failures; should one escape, it must not strand the drains after
      // it: it is thrown on its own, as it was from the drain's own microtask.
      queueMicrotask(() => {
        throw e;
      });
    }
  }
  list.length = 0;
}

/** A drain's deadline: DRAIN_MS from now, or sooner when the event-loop turn's shared time runs out. */
function drainUntil(): number {
  const now = performance.now();
  return Math.min(now + DRAIN_MS, loopDeadline(now));
}

/** A drain continued in a later turn (its budget was spent): a batch of work of its own. */
function resumeDrain(d: Drain): void {
  memoryGovernor.check();
  d.drain();
}

export class Drain implements GroupMember, SkipTarget {
  private readonly buf: SourceMessage[] = [];
  private scheduled = false;
  /** Woken while the run held its drains (DrainHost.holdDrains): drains once they are let go. */
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
  private readonly inlet: Inlet;
  /** The rule's side of the shared evaluation of its stream's messages (undefined: it evaluates alone). */
  shared: SharedEval | undefined = undefined;
  /** The drain group of the rules sharing the evaluation (drain-group.ts). */
  group: DrainGroup | undefined = undefined;
  readonly wake = (): void => {
    if (this.scheduled) return;
    if (this.run.holdDrains) {
      this.deferred = true;
      return;
    }
    this.scheduled = true;
    due.push(this);
    if (!dueScheduled) {
      dueScheduled = true;
      queueMicrotask(runDue);
    }
  };

  constructor(
    private readonly run: DrainHost,
    readonly name: string,
    def: StreamDef,
  ) {
    // A table counts one record per batch it reads (eKuiper's scan tables); a stream one per row.
    this.inlet = new Inlet(run.topo, name, def.fields, def.kind === "table", run.errors, () => messageWhere(name, this.current!));
  }

  readonly drain = (): void => {
    this.scheduled = false;
    // Held meanwhile (Execution.holdForSinks): a drain that yielded mid-backlog (setImmediate
    // below) or was queued before the hold takes nothing now — reading a backlog flat out, it
    // would otherwise go on feeding the sinks through the whole hold. It drains once let go.
    if (this.run.holdDrains) {
      this.deferred = true;
      return;
    }
    const att = this.att;
    if (!att) return;
    this.batch(att.sub, this.buf, 0);
  };

  /**
   * One batch: what `sub` holds (the drain's own), or, without `sub`, `n` messages a group's leader
   * took at `now`. One clock read per batch (none for a leader's): every record of it arrived in the same read.
   */
  private batch(sub: Attachment["sub"] | undefined, taken: readonly SourceMessage[], n: number, now = 0): void {
    const run = this.run;
    run.batchNow = now || run.clock.now();
    run.active = this;
    try {
      if (sub !== undefined) this.loop(sub, run, this.buf);
      else if (!this.replayBatch(taken, n, run)) this.processAll(taken, n);
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
  }

  private loop(sub: Attachment["sub"], run: DrainHost, buf: SourceMessage[]): void {
    // A group's leader takes for every parked member: its step is shared among them.
    const g = this.group !== undefined && this.group.leader === this ? this.group : undefined;
    const step = g === undefined ? STEP : g.step();
    // The clock is read only when one step will not empty the subscription: a drain of one
    // step (the common case: a message or a burst) needs no deadline.
    let until = sub.length > step ? drainUntil() : -1;
    while (sub.length > 0 && !run.halted) {
      const own = run.room();
      const room = g === undefined ? own : g.room(own);
      if (room <= 0) {
        this.node.bufferLength = sub.length;
        // A leader without room hands the lead on and waits for its own room, as a rule alone does.
        g?.abdicate(this);
        run.waitRoom(this.wake);
        return;
      }
      const n = sub.take(buf, Math.min(room, step));
      this.taken += n;
      // The source node's latency: the sampled wait of a record in the subscription (bus.ts).
      this.node.processLatencyUs = sub.latencyUs;
      this.processAll(buf, n);
      if (g !== undefined) {
        g.fanOut(buf, n, run.batchNow, this.shared?.summarize(buf, n) ?? null);
        this.shared?.batchDone(buf, n);
      }
      buf.length = 0;
      if (sub.length > 0) {
        // Records arrived while the step ran, or a sink's room cut it short: start the deadline now.
        if (until < 0) until = drainUntil();
        else if (performance.now() >= until) {
          this.scheduled = true;
          setImmediate(resumeDrain, this);
          break;
        }
      }
    }
    this.node.bufferLength = sub.length;
    if (sub.length === 0) this.group?.settle(this);
  }

  get sub(): Attachment["sub"] | undefined {
    return this.att?.sub;
  }

  get alone(): boolean {
    const run = this.run;
    return run.halted || run.tracer !== undefined || run.topo.peeked;
  }

  room(): number {
    return this.run.room();
  }

  /** A batch the group's leader took (drain-group.ts): processed as this drain's own would be. */
  follow(buf: readonly SourceMessage[], n: number, now: number): void {
    const run = this.run;
    if (run.halted) return;
    this.taken += n;
    this.batch(undefined, buf, n, now);
  }

  /**
   * A group leader's batch every message of which the group shared: replayed in one go
   * (SharedEval.replayBatch), as `processAll` would have replayed it message by message.
   */
  private replayBatch(buf: readonly SourceMessage[], n: number, run: DrainHost): boolean {
    const g = this.shared;
    if (g === undefined || run.tracer !== undefined || !g.replayBatch(buf, n, run.batchNow)) return false;
    const dn = this.decoderNode;
    if (dn !== undefined) {
      // The decoder node's latency: the stream decoder's sample, as one message in 64 takes it.
      const d = this.decoded;
      this.decoded = d + n;
      if (((d + 63) >> 6) !== ((d + n + 63) >> 6)) dn.processLatencyUs = this.att!.decodeLatency.us;
    }
    return true;
  }

  /** Drains what the subscription holds into the topology, ignoring sink room (a flushing stop). */
  drainAll(): void {
    const att = this.att;
    if (!att) return;
    const run = this.run;
    const buf: SourceMessage[] = [];
    run.active = this;
    while (att.sub.length) {
      const n = att.sub.take(buf, STEP);
      this.taken += n;
      this.processAll(buf, n);
      buf.length = 0;
    }
    run.active = undefined;
    this.current = null;
  }

  /**
   * What a shared stream's predicate index needs to answer this rule's WHERE for it, counting a
   * rejected message as taken (undefined: the rule evaluates every message itself).
   */
  indexFilter(fold: boolean): AttachOptions["filter"] {
    const r = rejectable(this.run.topo, this.name);
    if (!r) return undefined;
    this.spared = r;
    return { where: r.where, fold, target: this };
  }

  /** What counts a message the index spares the rule (rejectable). */
  private spared: { skipped(now: number): void } | undefined = undefined;

  /** SkipTarget: the index spared the rule a message at `now` (a group's leader: its parked members too). */
  skip(now: number): boolean {
    const run = this.run;
    if (run.halted || run.tracer !== undefined) return false;
    this.taken++;
    this.spared!.skipped(now);
    const g = this.group;
    if (g !== undefined && g.leader === this) g.skipped(now);
    return true;
  }

  /** GroupMember: an eager member counts a message the index spared its leader. */
  skipped(now: number): void {
    if (this.run.halted) return;
    this.taken++;
    this.spared?.skipped(now);
  }

  /** GroupMember: the rule counts its shared source node, so it follows eagerly. */
  get eager(): boolean {
    return this.shared?.countsSource ?? true;
  }

  /** GroupMember: counted through the group's tally meanwhile. */
  lazy = false;

  markTally(t: GroupTally): void {
    this.shared!.markTally(t);
  }

  catchUpTally(t: GroupTally): void {
    const msgs = this.shared!.catchUp(t, !this.run.halted);
    this.taken += msgs;
    // The decoder node's latency: the stream decoder's last sample.
    const dn = this.decoderNode;
    if (msgs > 0 && dn !== undefined && this.att) dn.processLatencyUs = this.att.decodeLatency.us;
  }

  /** The rule's counts are about to be read (or its run fails): a lazy group member catches up with its group. */
  catchUp(): void {
    if (this.lazy) this.group?.catchUp(this);
  }

  /** GroupMember: a batch the group shared whole: its items into this rule's sinks, as its own drain would push them. */
  followItems(items: readonly Item[], now: number): void {
    const run = this.run;
    if (run.halted) return;
    run.batchNow = now;
    run.active = this;
    try {
      this.shared!.pushItems(items);
      // Nothing to write at a drain's end for most rules (Execution.commit).
      run.commit();
    } catch (e) {
      run.fatal(e);
    } finally {
      run.batchNow = 0;
      run.active = undefined;
    }
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
  private processAll(buf: readonly SourceMessage[], n: number): void {
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

  private process(m: SourceMessage): void {
    const dec: Decoder | null = this.att!.decoder;
    const now = this.run.now();
    this.current = m;
    let rows: Obj | Obj[];
    if (m.decoded !== null && dec) {
      // Decoded once for all the rules of a shared stream (their bus's one decoder).
      rows = m.decoded;
      const dn = this.decoderNode;
      if (dn !== undefined && (++this.decoded & 63) === 1) dn.processLatencyUs = this.att!.decodeLatency.us;
    } else if (m.payload !== null && dec) {
      // The decoder node's latency: one payload in 64 is timed.
      const dn = this.decoderNode;
      const timed = dn !== undefined && (++this.decoded & 63) === 1;
      const t0 = timed ? performance.now() : 0;
      const decoded = this.inlet.decode(dec, m.payload);
      if (decoded === undefined) return;
      rows = decoded;
      // The rules after this one on a shared stream (one decoder for all) reuse the rows.
      m.decoded = decoded;
      if (timed) dn.processLatencyUs = this.att!.decodeLatency.us = Math.round((performance.now() - t0) * 1000);
    } else rows = m.rows ?? {};
    const g = this.shared;
    // A traced rule evaluates alone (its spans are its own).
    if (g !== undefined && dec !== null && this.run.tracer === undefined) {
      // The leader of members that follow it records; the others replay what it recorded.
      const gr = this.group;
      if (g.run(m, rows, now, this.inlet, gr !== undefined && gr.leader === this && gr.size > 0)) return;
    }
    this.inlet.ingest(rows, m.meta, now, dec !== null);
  }
}

/** An MQTT v5 message's `traceparent` user property (rules-and-sinks.md §9.1). */
function metaTraceparent(meta: Obj | null): unknown {
  const p = meta?.properties;
  return p !== null && typeof p === "object" && !Array.isArray(p) ? (p as Obj).traceparent : undefined;
}
