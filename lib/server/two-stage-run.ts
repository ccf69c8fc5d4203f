/**
 * The runs of a two-stage rule in a floe group (docs/group.md, "Two-stage aggregation";
 * plan/two-stage.ts splits the SELECT). Each partition's run is stage 1: its window results are
 * the partial rows of each key, sent by a sink (fenced as the run's other sinks are) into the
 * group's partials stream (cluster/partials.ts). The owner of partition 0 also runs stage 2, the
 * merge: it reads every partition's partials from the start of the stream, releases a window once
 * every partition has closed it, and feeds the window's partials — then a marker row at the
 * window's end that moves its event-time watermark — to the rule's projection, HAVING, ORDER BY,
 * LIMIT and sinks, fenced and epoch-stamped by partition 0's ownership.
 */
import { decodePartial, lastReleased, PartialGate, publishPartial, publishReleased, readPartials, type ClusterNode } from "../cluster/index.ts";
import { errorText } from "../errors.ts";
import { PARTIAL_END, PARTIAL_MARK, PARTIAL_START, PARTIAL_TS, type TwoStagePlan } from "../plan/two-stage.ts";
import type { StreamDef } from "../plan/streams.ts";
import type { RuntimeEnv } from "../runtime/env.ts";
import { Rule, type RunExit } from "../runtime/rule.ts";
import type { SourceHub } from "../runtime/sources.ts";
import { parseSinkCommon } from "../sink/common.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../sink/connector.ts";
import { SinkPipeline } from "../sink/pipeline.ts";
import type { SourceConnector, SourceContext } from "../source/connector.ts";
import { SourceMessage } from "../source/message.ts";
import type { StoredRule } from "../store/stored-rule.ts";
import type { Obj } from "../value/values.ts";
import type { HeldRun } from "./lifecycle.ts";
import { Emission, Watermark, type Item } from "../core/item.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import type { SinkNode } from "../core/sink.ts";

/** Stage 1's sink: each window's partial rows, published under the partition's epoch. */
class PartialSink implements SinkConnector {
  readonly bytes = false;
  private closed = false;
  constructor(
    private readonly cluster: ClusterNode,
    private readonly subject: string,
    private readonly p: number,
    private readonly epoch: number,
  ) {}
  open(ctx: SinkContext): void {
    ctx.status.connected();
  }
  async send(item: SinkItem): Promise<void> {
    let rows = Array.isArray(item.payload) ? (item.payload as Obj[]) : [item.payload as Obj];
    if (rows.length === 0) return;
    const end = Number(rows[0]![PARTIAL_END]);
    if (rows[0]![EMPTY] === true) rows = [];
    // A partial lost would make the merge wrong, not late: retried until stored (or the run stops).
    for (;;) {
      try {
        return await publishPartial(this.cluster.nc, this.cluster.signer, this.subject, this.p, this.epoch, end, rows);
      } catch (e) {
        if (this.closed) throw e;
        await Bun.sleep(250);
      }
    }
  }
  close(): void {
    this.closed = true;
  }
}

/** How often the merge considers storing a release mark, and how long after a window's release at the earliest, ms. */
const MARK_EVERY_MS = 500;
const MARK_SETTLE_MS = 2000;

/** Marks the partial of a window the partition had no rows in. */
const EMPTY = "__empty";

/**
 * Stage 1's sink node: the pipeline of PartialSink, and after each window the partition closed
 * without a result (the window's close mark, a Watermark of its end, arriving after its rows), a
 * marker in the same queue, so the merge hears of every window in order.
 */
class PartialOut implements SinkNode {
  readonly metrics: NodeMetrics[];
  readonly name: string;
  private last = NaN;
  constructor(private readonly pipe: SinkPipeline) {
    this.metrics = pipe.metrics;
    this.name = pipe.name;
  }
  push(item: Item): void {
    if (item instanceof Watermark) {
      this.closed(item.ts);
      return;
    }
    if (item instanceof Emission) {
      const r = item.rows[0];
      if (r) this.last = Number(r[PARTIAL_END]);
    }
    this.pipe.push(item);
  }
  private closed(end: number): void {
    if (this.last !== end) this.pipe.push(new Emission([{ [PARTIAL_END]: BigInt(end), [EMPTY]: true }], null));
  }
  end(): void {
    this.pipe.end();
  }
  room(): number {
    return this.pipe.room();
  }
  onRoom(fn: () => void): void {
    this.pipe.onRoom(fn);
  }
  snapshot(): unknown {
    return this.pipe.snapshot();
  }
  restore(s: unknown): void {
    this.pipe.restore(s);
  }
}

/** Stage 2's source: the partials of every partition, released window by window by a PartialGate. */
class MergeSource implements SourceConnector {
  private readonly gate: PartialGate;
  /** Released windows not yet taken by the bus; `head` is the first not published. */
  private queue: Obj[][] = [];
  private head = 0;
  private waiting = false;
  private closed = false;
  private stopRead: () => Promise<void> = async () => {};
  private ctx: SourceContext | undefined;
  /** Windows ending at or before this were handed on and sent by an earlier merge (its last release mark): rebuilt, not handed on again. */
  private from = -Infinity;
  /** Windows handed on and when, not yet marked (oldest first). */
  private released: { end: number; at: number }[] = [];
  private marked = -Infinity;
  private marking = false;

  constructor(
    private readonly cluster: ClusterNode,
    private readonly subject: string,
    partitions: number,
    private readonly epoch: number,
    private readonly fence: () => boolean,
    private readonly log: (line: string) => void,
  ) {
    this.gate = new PartialGate(partitions);
  }

  async open(ctx: SourceContext): Promise<void> {
    this.ctx = ctx;
    this.from = await lastReleased(this.cluster.nc, this.cluster.signer, this.cluster.settings.group, this.subject);
    this.stopRead = await readPartials(this.cluster.nc, this.cluster.settings.group, this.subject, (data) => this.take(data));
    ctx.status.connected();
  }

  private take(data: string): void {
    if (this.closed) return;
    const ctx = this.ctx!;
    const part = decodePartial(this.cluster.signer, this.subject, data);
    if (typeof part === "string") {
      ctx.exception(`refused a partial aggregate: ${part}`);
      return;
    }
    for (const w of this.gate.add(part.p, part.end, part.rows)) {
      if (w.end <= this.from) continue;
      this.released.push({ end: w.end, at: Date.now() });
      let ts = BigInt(w.end);
      for (const r of w.rows) if (typeof r[PARTIAL_START] === "bigint" && (r[PARTIAL_START] as bigint) < ts) ts = r[PARTIAL_START] as bigint;
      const rows: Obj[] = [];
      for (const r of w.rows) rows.push({ ...r, [PARTIAL_MARK]: 0n, [PARTIAL_TS]: ts });
      // At the window's end: it closes the window in the merge's event time, and passes no filter.
      rows.push({ [PARTIAL_MARK]: 1n, [PARTIAL_TS]: BigInt(w.end) });
      this.queue.push(rows);
    }
    this.pump();
  }

  private pump(): void {
    const ctx = this.ctx;
    while (ctx && !this.waiting && !this.closed && this.head < this.queue.length) {
      if (!ctx.bus.publish([new SourceMessage(null, this.queue[this.head]!, null)])) {
        this.waiting = true;
        ctx.bus.onDrain(() => {
          this.waiting = false;
          this.pump();
        });
        return;
      }
      this.head++;
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
  }

  /**
   * Stores the release mark of the last window handed on at least `settleMs` ago, when `idle`
   * (the rule's sinks hold nothing): its results have then been sent, so a later merge need not
   * hand it on again. A window handed on but not yet sent when this member dies is handed on again.
   */
  async mark(settleMs: number, idle: boolean): Promise<void> {
    if (this.marking || !idle || !this.fence()) return;
    const now = Date.now();
    let end = -Infinity;
    let i = 0;
    for (; i < this.released.length && this.released[i]!.at <= now - settleMs; i++) end = this.released[i]!.end;
    if (end <= this.marked) return;
    this.marking = true;
    try {
      await publishReleased(this.cluster.nc, this.cluster.signer, this.subject, this.epoch, end);
      this.marked = end;
      this.released = this.released.slice(i);
    } catch (e) {
      this.log(`cannot store the release mark of window ${end}: ${errorText(e)}`);
    } finally {
      this.marking = false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stopRead();
  }
}

export interface TwoStageOptions {
  readonly def: StoredRule;
  readonly plan: TwoStagePlan;
  /** The partitioned stream's name (stage 2 reads a stream of that name). */
  readonly stream: string;
  readonly partitions: number;
  /** The partials' subject (cluster/partials.ts `partialsSubject`). */
  readonly subject: string;
  readonly cluster: ClusterNode;
  readonly env: RuntimeEnv;
  readonly hub: SourceHub;
  readonly dataDir: string;
  readonly log: (line: string) => void;
}

/** The stream stage 2 reads, under the partitioned stream's name (the rule's qualifiers still resolve). */
function mergeStream(name: string): StreamDef {
  return { name, kind: "stream", fields: null, options: { DATASOURCE: name, FORMAT: "json", TIMESTAMP: PARTIAL_TS }, statement: "" };
}

/** `split` unless one of its stages does not plan (a reason then: the rule runs per partition). */
export function checkedTwoStage(
  split: { plan: TwoStagePlan } | { reason: string } | undefined,
  def: StoredRule,
  stream: string,
  streams: ReadonlyMap<string, StreamDef>,
  env: RuntimeEnv,
  hub: SourceHub,
): { plan: TwoStagePlan } | { reason: string } | undefined {
  if (!split || !("plan" in split)) return split;
  try {
    Rule.create({ id: def.id, sql: def.sql, select: split.plan.stage1, actions: [], options: def.options.raw }, streams, env, hub);
    const merge = new Map(streams);
    merge.set(stream, mergeStream(stream));
    Rule.create({ id: def.id, sql: def.sql, select: split.plan.stage2, actions: [], options: { ...def.options.raw, isEventTime: true, lateTolerance: 0, qos: 0 } }, merge, env, hub);
  } catch (e) {
    return { reason: `its stages do not plan: ${errorText(e)}` };
  }
  return split;
}

/**
 * Starts partition `p`'s stage 1 (`rule` is its definition as a partitioned run: id, options,
 * actions) over `streams`, and on partition 0 the merge too; both fenced by `fence`.
 */
export async function startTwoStage(
  o: TwoStageOptions,
  rule: { readonly id: string; readonly options: Record<string, unknown>; readonly actions: readonly Record<string, unknown>[] },
  streams: ReadonlyMap<string, StreamDef>,
  p: number,
  epoch: number,
  fence: () => boolean,
  onExit: (exit: RunExit) => void,
): Promise<HeldRun> {
  const { def, env } = o;
  const sink = new SinkPipeline({
    ruleId: rule.id,
    type: "partial",
    index: 0,
    props: {},
    common: parseSinkCommon({}, env.cacheDefaults),
    connector: new PartialSink(o.cluster, o.subject, p, epoch),
    dataDir: o.dataDir,
    aesKey: env.aesKey,
    schemas: env.schemas,
    fence,
    log: o.log,
  });
  const out = new PartialOut(sink);
  const stage1 = Rule.create({ id: rule.id, name: def.name, sql: def.sql, select: o.plan.stage1, actions: [], options: rule.options }, streams, env, o.hub, {
    extraSinks: [out],
    fence,
    closeMarks: true,
  });
  sink.open();
  const run1 = await stage1.start(onExit).catch(async (e: unknown) => {
    await sink.close(0);
    throw e;
  });
  const stop1 = async () => {
    await run1.stop();
    await sink.close(env.sinkGraceMs);
  };
  if (p !== 0) return { nodes: () => run1.nodes(), topo: () => run1.topo(), stop: stop1 };

  const from = o.stream;
  const merge = new Map(streams);
  merge.set(from, mergeStream(from));
  // The merge keeps no checkpoint: a new owner of partition 0 rebuilds it from the partials stream.
  const options = { ...def.options.raw, isEventTime: true, lateTolerance: 0, qos: 0 };
  const source = new MergeSource(o.cluster, o.subject, o.partitions, epoch, fence, (line) => o.log(`rule ${def.id}: ${line}`));
  let run2: Awaited<ReturnType<Rule["start"]>>;
  try {
    const stage2 = Rule.create({ id: `${def.id}.merge`, name: def.name, sql: def.sql, select: o.plan.stage2, actions: rule.actions, options }, merge, env, o.hub, {
      fence,
      connectors: new Map([[from, source]]),
    });
    run2 = await stage2.start(onExit);
  } catch (e) {
    await stop1();
    throw e;
  }
  o.log(`rule ${def.id}: merging the partials of ${o.partitions} partitions here (epoch ${epoch})`);
  const idle = () => run2.nodes().every((n) => n.kind !== "sink" || n.bufferLength === 0);
  const timer = setInterval(() => void source.mark(MARK_SETTLE_MS, idle()), MARK_EVERY_MS);
  return {
    nodes: () => [...run1.nodes(), ...run2.nodes()],
    topo: () => run1.topo(),
    stop: async () => {
      clearInterval(timer);
      await run2.stop().catch((e: unknown) => o.log(`rule ${def.id}: stopping the merge: ${errorText(e)}`));
      await stop1();
    },
  };
}
