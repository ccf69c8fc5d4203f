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
import { Emission, type Item } from "../core/item.ts";
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

/** Marks the partial of a window the partition had no rows in. */
const EMPTY = "__empty";

/**
 * Stage 1's sink node: the pipeline of PartialSink, and after each window the partition closed
 * without a result (`closed`), a marker in the same queue, so the merge hears of every window in order.
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
    if (item instanceof Emission) {
      const r = item.rows[0];
      if (r) this.last = Number(r[PARTIAL_END]);
    }
    this.pipe.push(item);
  }
  closed(end: number): void {
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
  /** Windows ending before this were handed on by an earlier merge (its last release mark): rebuilt, not handed on again. */
  private from = -Infinity;
  /** The release marks, stored one after another. */
  private marks: Promise<void> = Promise.resolve();

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
    // The last marked window is handed on again: its results may not all have been sent (the sink's duplicates drop what was).
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
      if (w.end < this.from) continue;
      if (this.fence()) {
        const { nc, signer } = this.cluster;
        this.marks = this.marks.then(() => publishReleased(nc, signer, this.subject, this.epoch, w.end)).catch((e: unknown) => this.log(`cannot store the release mark of window ${w.end}: ${errorText(e)}`));
      }
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

  async close(): Promise<void> {
    this.closed = true;
    await this.stopRead();
  }
}

export interface TwoStageOptions {
  readonly def: StoredRule;
  readonly plan: TwoStagePlan;
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
    onWindowClose: (end) => out.closed(end),
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

  const from = def.select!.from.name;
  const merge = new Map(streams);
  merge.set(from, mergeStream(from));
  // The merge keeps no checkpoint: a new owner of partition 0 rebuilds it from the partials stream.
  const options = { ...def.options.raw, isEventTime: true, lateTolerance: 0, qos: 0 };
  let run2;
  try {
    const stage2 = Rule.create({ id: `${def.id}.merge`, name: def.name, sql: def.sql, select: o.plan.stage2, actions: rule.actions, options }, merge, env, o.hub, {
      fence,
      connectors: new Map([[from, new MergeSource(o.cluster, o.subject, o.partitions, epoch, fence, (line) => o.log(`rule ${def.id}: ${line}`))]]),
    });
    run2 = await stage2.start(onExit);
  } catch (e) {
    await stop1();
    throw e;
  }
  o.log(`rule ${def.id}: merging the partials of ${o.partitions} partitions here (epoch ${epoch})`);
  return {
    nodes: () => [...run1.nodes(), ...run2.nodes()],
    topo: () => run1.topo(),
    stop: async () => {
      await run2.stop().catch((e: unknown) => o.log(`rule ${def.id}: stopping the merge: ${errorText(e)}`));
      await stop1();
    },
  };
}
