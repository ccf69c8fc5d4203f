/**
 * A rule's topology: source nodes → their helper operators → the plan's operators → sinks, wired
 * as a synchronous push chain. Built from the plan's specs; the source side is fed by whoever
 * runs the rule (pipe mode or the daemon's bus).
 */
import { EngineError, ErrCode } from "../errors.ts";
import type { Tuple } from "../expr/row.ts";
import type { RulePlan } from "../plan/specs.ts";
import type { GraphPlan } from "../plan/graph.ts";
import { WindowOp, type WindowEnv } from "../ops/window/index.ts";
import { createOperator } from "./create-operator.ts";
import { SwitchOp } from "../ops/switch.ts";
import { DecoderOp } from "../ops/decoder.ts";
import { WatermarkOp } from "../ops/watermark.ts";
import { bytesPreview } from "../core/error-groups.ts";
import type { Peek } from "./peek.ts";
import type { Consumer, Item } from "../core/item.ts";
import { NodeMetrics } from "../core/metrics.ts";
import { SmallMap } from "../core/small-map.ts";
import { Operator } from "../core/operator.ts";
import type { SinkNode } from "../core/sink.ts";
import { JoinAlignerOp, type ScanTableContent } from "../ops/join.ts";
import { LookupOp } from "../ops/lookup.ts";
import { graphSinkInput, FanOutAll, GraphSinkInput } from "./graph-wiring.ts";
import { LinkPool, TracedConsumer, type RuleTracer } from "./trace/rule-tracer.ts";

export type RuleEnv = WindowEnv;

export interface SourceNode {
  /** The rule's source node, or a shared stream's node that every rule reading it reports (shareSource). */
  metrics: NodeMetrics;
  /** Whether this rule's input counts into `metrics` (a shared node counts through one rule). */
  counts: boolean;
  /** Swapped for a traced one while the rule is traced (`trace`). */
  head: Consumer;
  readonly helpers: Operator[];
}

class FanOut implements Consumer {
  constructor(readonly targets: SinkNode[]) {}
  push(item: Item): void {
    for (const s of this.targets) s.push(item);
  }
}

/** The span name of a sink: its `sink_<name>_<i>` node (the transform and encode steps run inside it). */
function sinkSpanName(s: SinkNode): string {
  const m = s.metrics[s.metrics.length - 1];
  return m ? `${m.kind}_${m.name}` : "sink";
}

export class Topology {
  /** By stream name (a SmallMap: a rule reads one stream or a few). */
  private readonly sources = new SmallMap<string, SourceNode>();
  private readonly operators: Operator[];
  private readonly lookups: LookupOp[];
  private readonly sinks: SinkNode[];
  /** What the plan's last node pushes into: the sink, or a fan-out to the sinks. */
  private readonly out: Consumer | undefined;
  private readonly env: RuleEnv;
  /** Epoch ms at which the topology (the rule's run) started. */
  readonly startedAt: number;

  /** Consumers that are not nodes themselves, by the node they stand for (a join aligner's table inputs). */
  private readonly aliases = new Map<Consumer, string>();
  /** Puts the untraced wiring back (set while the rule is traced). */
  private untrace: (() => void)[] = [];
  /** The peek on (runtime/peek.ts), and what puts the wiring under its taps back. */
  private peeking: Peek | undefined;
  private unpeek: (() => void)[] = [];

  /** Graph rules (graph-rules.md §8): `sources` and `edges` of GET /rules/{id}/topo. */
  readonly graphTopo: { sources: string[]; edges: Record<string, string[]> } | undefined;

  constructor(plan: RulePlan, env: RuleEnv, sinks: SinkNode[], graph?: GraphPlan) {
    this.env = env;
    this.startedAt = env.now();
    this.sinks = sinks;
    if (graph) {
      this.operators = [];
      this.lookups = [];
      this.graphTopo = this.wireGraph(graph, env, sinks);
      this.out = undefined;
      return;
    }
    this.graphTopo = undefined;
    this.operators = plan.ops.map((s) => createOperator(s, env));
    this.lookups = this.operators.filter((o): o is LookupOp => o instanceof LookupOp);
    const out: Consumer = sinks.length === 1 ? sinks[0]! : new FanOut(sinks);
    this.out = out;
    for (let i = 0; i < this.operators.length; i++) this.operators[i]!.next = this.operators[i + 1] ?? out;
    const first: Consumer = this.operators[0] ?? out;
    const aligner = this.operators.find((o): o is JoinAlignerOp => o instanceof JoinAlignerOp);
    for (const src of plan.sources) {
      const helpers = src.helpers.map((s) => createOperator(s, env));
      // Scan tables feed the join aligner's table side, not the main chain (sql §12.4).
      const target = src.def.kind === "table" && aligner ? aligner.tableInput(src.name) : first;
      if (target !== first) this.aliases.set(target, "op_" + aligner!.metrics.name);
      for (let i = 0; i < helpers.length; i++) helpers[i]!.next = helpers[i + 1] ?? target;
      const metrics = new NodeMetrics("source", src.name);
      metrics.connectionStatus = 1;
      this.sources.set(src.name, { metrics, counts: true, head: helpers[0] ?? target, helpers });
    }
  }

  /**
   * Wires a graph plan as a DAG: every node pushes to the consumers its edges name (a fan-out
   * when several), a switch to one consumer list per port, sinks through an adapter that turns
   * rows and collections into emissions. `sinks` are in `graph.sinks` order.
   */
  private wireGraph(graph: GraphPlan, env: RuleEnv, sinks: SinkNode[]): { sources: string[]; edges: Record<string, string[]> } {
    const ops = new Map<string, Operator>();
    const heads = new Map<string, { consumer: Consumer; name: string }>();
    const edges = new Map<string, string[]>();
    const add = (a: string, b: string) => (edges.get(a) ?? edges.set(a, []).get(a)!).push(b);
    // Host sinks (pipe mode's stdout) come first and receive what every graph sink receives.
    const extra = sinks.slice(0, sinks.length - graph.sinks.length).map(graphSinkInput);
    graph.sinks.forEach((s, i) => {
      const sink = sinks[extra.length + i]!;
      const names = sink.metrics.map((m) => `${m.kind}_${m.name}`);
      for (let k = 0; k + 1 < names.length; k++) add(names[k]!, names[k + 1]!);
      const input = graphSinkInput(sink);
      heads.set(s.node, { consumer: extra.length ? new FanOutAll([...extra, input]) : input, name: names[0]! });
    });
    for (const o of graph.ops) {
      const op = createOperator(o.spec, env);
      ops.set(o.node, op);
      heads.set(o.node, { consumer: op, name: "op_" + o.spec.name });
      (this.operators as Operator[]).push(op);
      if (op instanceof LookupOp) (this.lookups as LookupOp[]).push(op);
    }
    const targets = (from: string, names: readonly string[]): Consumer => {
      const list: Consumer[] = [];
      for (const n of names) {
        const h = heads.get(n);
        if (!h) continue; // a lookup table's node: the join queries it
        list.push(h.consumer);
        add(from, h.name);
      }
      return list.length === 1 ? list[0]! : new FanOutAll(list);
    };
    for (const o of graph.ops) {
      const op = ops.get(o.node)!;
      const from = "op_" + o.spec.name;
      if (op instanceof SwitchOp) {
        // eKuiper names switch ports ≥ 1 `op_name_<i>` in the topology (§8).
        o.outs.forEach((port, i) => (op.ports[i] = targets(i === 0 ? from : `op_name_${i}`, port ?? [])));
      } else op.next = targets(from, o.outs[0] ?? []);
    }
    const sources: string[] = [];
    for (const src of graph.sources) {
      const helpers = src.helpers.map((s) => createOperator(s, env));
      const chain = ["source_" + src.name, ...helpers.map((h) => "op_" + h.metrics.name)];
      for (let i = 0; i + 1 < chain.length; i++) add(chain[i]!, chain[i + 1]!);
      const target = targets(chain[chain.length - 1]!, src.outs);
      for (let i = 0; i < helpers.length; i++) helpers[i]!.next = helpers[i + 1] ?? target;
      const metrics = new NodeMetrics("source", src.name);
      metrics.connectionStatus = 1;
      // Two graph sources may read one stream: the later node joins the same inlet.
      const prev = this.sources.get(src.name);
      const head = helpers[0] ?? target;
      if (prev) this.sources.set(src.name, { metrics, counts: true, head: new FanOutAll([prev.head, head]), helpers: [...prev.helpers, ...helpers] });
      else this.sources.set(src.name, { metrics, counts: true, head, helpers });
      if (!sources.includes(chain[0]!)) sources.push(chain[0]!);
    }
    const out: Record<string, string[]> = {};
    for (const k of [...edges.keys()].sort()) out[k] = edges.get(k)!;
    return { sources, edges: out };
  }

  /**
   * Starts tracing with `tracer` (rest-api.md §15), or stops it (undefined): every edge of the
   * wiring gets a TracedConsumer in front of the node it feeds, and gets its node back at the
   * stop, so an untraced rule runs exactly the plain chain. Called between two drains.
   */
  trace(tracer: RuleTracer | undefined): void {
    // The peek's taps stay outermost: off while the traced wiring changes, then back on top.
    const peek = this.peeking;
    if (peek) this.peek(undefined);
    this.retrace(tracer);
    if (peek) this.peek(peek);
  }

  /**
   * Puts `peek`'s tap after every source and operator (undefined: takes them away); a switch
   * gets one per port. Called between two drains, like `trace`.
   */
  peek(peek: Peek | undefined): void {
    const undo = this.unpeek;
    this.unpeek = [];
    for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
    this.peeking = peek;
    if (!peek) return;
    const swap = <T extends object, K extends keyof T>(o: T, k: K, v: T[K]): void => {
      const old = o[k];
      o[k] = v;
      this.unpeek.push(() => (o[k] = old));
    };
    for (const op of this.allOperators()) {
      const name = "op_" + op.metrics.name;
      swap(op, "next", peek.tap(name, op.next));
      if (op instanceof SwitchOp) for (let i = 0; i < op.ports.length; i++) swap(op.ports, i, peek.tap(i === 0 ? name : `op_name_${i}`, op.ports[i]!));
    }
    for (const [name, src] of this.sources) swap(src, "head", peek.tap("source_" + name, src.head));
  }

  private retrace(tracer: RuleTracer | undefined): void {
    const undo = this.untrace;
    this.untrace = [];
    for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
    if (!tracer) return;
    const swap = <T extends object, K extends keyof T>(o: T, k: K, v: T[K]): void => {
      const old = o[k];
      o[k] = v;
      this.untrace.push(() => (o[k] = old));
    };
    // A traced rule handles each item within its push (no OpEnv.turnMs), so what an item makes
    // downstream runs inside its span.
    swap(this.env as { turnMs?: number }, "turnMs", undefined);
    const pools = new Map<Consumer, LinkPool>();
    for (const op of this.operators) if (op instanceof WindowOp) pools.set(op, new LinkPool());
    for (const op of this.allOperators()) {
      const from = "op_" + op.metrics.name;
      const pool = pools.get(op);
      swap(op, "next", this.traced(op.next, tracer, from, pools, pool));
      if (op instanceof SwitchOp) for (let i = 0; i < op.ports.length; i++) swap(op.ports, i, this.traced(op.ports[i]!, tracer, from, pools, pool));
    }
    for (const [name, src] of this.sources) swap(src, "head", this.traced(src.head, tracer, "source_" + name, pools, undefined));
  }

  /**
   * The traced stand-in of the consumer `from` pushes into: a span per item for a node; a
   * fan-out traces each of its targets.
   */
  private traced(c: Consumer, tracer: RuleTracer, from: string, pools: Map<Consumer, LinkPool>, emitter: LinkPool | undefined): Consumer {
    const e = emitter ?? null;
    if (c instanceof Operator) return new TracedConsumer(c, "op_" + c.metrics.name, tracer, c.metrics, from, pools.get(c) ?? null, e, null, c instanceof WindowOp ? c : null);
    if (c instanceof FanOut || c instanceof FanOutAll) return new FanOutAll(c.targets.map((x) => this.traced(x, tracer, from, pools, emitter)));
    if (c instanceof GraphSinkInput) return new TracedConsumer(c, sinkSpanName(c.sink), tracer, c.sink.metrics[0] ?? null, from, null, e, c.sink);
    const alias = this.aliases.get(c);
    if (alias !== undefined) return new TracedConsumer(c, alias, tracer, null, from, null, e);
    for (const s of this.sinks) if (s === c) return new TracedConsumer(c, sinkSpanName(s), tracer, s.metrics[0] ?? null, from, null, e, s);
    // Nothing behind it (an operator's default discard): nothing to trace.
    return c;
  }

  /** Delivers one record of `stream` into the rule; `counted` false: a further row of a counted batch. */
  ingest(stream: string, t: Tuple, rows = 1, counted = true): void {
    const src = this.sources.get(stream);
    if (!src) return;
    if (src.counts) {
      const m = src.metrics;
      if (counted) {
        m.recordsIn++;
        m.recordsOut++;
      }
      m.messagesProcessed += rows;
      m.lastInvocation = this.env.now();
    }
    src.head.push(t);
  }

  /**
   * The one chain of a rule reading one stream (its source, the source's helpers and the plan's
   * operators, in order, and the consumer the last of them pushes into): what a shared
   * evaluation (shared-eval.ts) records and replays. Undefined for a graph rule or several sources.
   */
  chain(stream: string): { source: SourceNode; ops: Operator[]; out: Consumer } | undefined {
    const src = this.sources.get(stream);
    if (this.graphTopo || this.sources.size !== 1 || !src || !this.out) return undefined;
    return { source: src, ops: [...src.helpers, ...this.operators], out: this.out };
  }

  /** A data peek is on (its taps sit in the wiring). */
  get peeked(): boolean {
    return this.peeking !== undefined;
  }

  /** Counts a record the source could not decode; `payload` is its bytes, when it had any. */
  sourceError(stream: string, message: string, payload?: Uint8Array): void {
    const src = this.sources.get(stream);
    if (!src) return;
    if (src.counts) src.metrics.recordsIn++;
    // A byte source's decode failure belongs to its decoder node (the source did emit the message).
    const dec = src.helpers.find((h) => h instanceof DecoderOp);
    if (dec) {
      if (src.counts) src.metrics.recordsOut++;
      dec.metrics.recordsIn++;
      dec.metrics.exception(message, this.env.now());
      if (payload) dec.metrics.attachPayload(bytesPreview(payload));
    } else {
      src.metrics.exception(message, this.env.now());
      if (payload) src.metrics.attachPayload(bytesPreview(payload));
    }
  }

  /** The source node of `stream` (connection metrics live there). */
  sourceMetrics(stream: string): NodeMetrics | undefined {
    return this.sources.get(stream)?.metrics;
  }

  /**
   * A shared stream's source node stands for this rule's (eKuiper shows the shared node, which
   * counts while any rule holds the stream); `counting`: this rule's input is what it counts.
   * The losses counted for this rule at its start carry over.
   */
  shareSource(stream: string, node: NodeMetrics, counting: boolean): void {
    const src = this.sources.get(stream);
    if (!src) return;
    const own = src.metrics;
    if (own !== node && own.recordsLost >= 0) node.recordsLost = Math.max(0, node.recordsLost) + own.recordsLost;
    src.metrics = node;
    src.counts = counting;
  }

  /** The `<i>_decoder` node of `stream` (byte sources), if any. */
  decoderMetrics(stream: string): NodeMetrics | undefined {
    return this.sources.get(stream)?.helpers.find((h) => h instanceof DecoderOp)?.metrics;
  }

  /** The window operators (for `--on-eof flush`). */
  windowOps(): WindowOp[] {
    return this.operators.filter((o): o is WindowOp => o instanceof WindowOp);
  }

  /** The plan's operators, lookup nodes among them: the run honours each one's room (Operator.room, LookupOp.room). */
  planOps(): readonly Operator[] {
    return this.operators;
  }

  /** The lookup-table nodes (sql §12.5): the run attaches their sources. */
  lookupOps(): readonly LookupOp[] {
    return this.lookups;
  }

  /** The scan tables of the join aligner, or undefined when the rule joins none. */
  scanTables(): ScanTableContent[] | undefined {
    return this.operators.find((o): o is JoinAlignerOp => o instanceof JoinAlignerOp)?.scanTables();
  }

  /** Resolves once no lookup node holds an item waiting for an asynchronous lookup. */
  async settle(): Promise<void> {
    const ops = this.lookupOps();
    // A later lookup receives what an earlier one releases: settle in plan order.
    for (const op of ops) await op.settle();
  }

  /** Rows dropped inside the rule (late events, rows over the windows' cap), for the lost count. */
  dropped(): number {
    let n = 0;
    for (const op of this.operators) {
      if (op instanceof WatermarkOp) n += op.dropped;
      // Rows over the windows' cap, counted by the window and watermark nodes.
      if ((op instanceof WindowOp || op instanceof WatermarkOp) && op.metrics.recordsLost > 0) n += op.metrics.recordsLost;
    }
    return n;
  }

  hasSource(stream: string): boolean {
    return this.sources.has(stream);
  }

  sourceNames(): string[] {
    return [...this.sources.keys()];
  }

  /** An operator is spreading an item across turns (Operator.busy): no `snapshot` until it is done. */
  get busy(): boolean {
    for (const op of this.operators) if (op.busy) return true;
    return false;
  }

  /**
   * The state of every stateful node, by node name (rules-and-sinks.md §5). The topology is a
   * synchronous push chain driven by the rule's inlets, so between two batches — where the
   * checkpoint timer runs — every operator is quiescent unless one is `busy` spreading an item
   * across turns, whose state is then partly in the item: the checkpoint waits for it to end
   * (runtime/checkpoint.ts), and this snapshot is consistent without barriers; qos 1 and 2
   * therefore behave the same. Values are live references: encode them before the next batch.
   */
  snapshot(): Record<string, unknown> {
    if (this.busy) throw new EngineError("a snapshot was asked while an operator spreads an item across turns", ErrCode.executor);
    const out: Record<string, unknown> = {};
    for (const op of this.allOperators()) {
      const s = op.snapshot();
      if (s !== undefined) out[op.metrics.name] = s;
    }
    return out;
  }

  /** The state of the sinks that keep one (a keyed connector's item count, sink/pipeline.ts), by sink name. */
  sinkState(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const s of this.sinks) {
      const st = s.name === undefined ? undefined : s.snapshot?.();
      if (st !== undefined) out[s.name!] = st;
    }
    return out;
  }

  restoreSinks(state: Record<string, unknown>): void {
    for (const s of this.sinks) {
      const st = s.name === undefined ? undefined : state[s.name];
      if (st !== undefined) s.restore?.(st);
    }
  }

  /** Loads a `snapshot()` into this fresh topology, before any input; unknown nodes are ignored. */
  restore(state: Record<string, unknown>): void {
    for (const op of this.allOperators()) {
      const s = state[op.metrics.name];
      if (s !== undefined) op.restore(s);
    }
  }

  private allOperators(): Operator[] {
    const ops: Operator[] = [];
    for (const s of this.sources.values()) ops.push(...s.helpers);
    ops.push(...this.operators);
    return ops;
  }

  /** End of input: operators holding state (windows) flush, then sinks end. */
  end(): void {
    for (const s of this.sources.values()) for (const h of s.helpers) h.close();
    for (const op of this.operators) {
      op.complete();
      op.close();
    }
    for (const s of this.sinks) s.end();
  }

  /** Every node's metrics in topology order: sources (with helpers), operators, sinks. */
  nodes(): NodeMetrics[] {
    const out: NodeMetrics[] = [];
    for (const s of this.sources.values()) out.push(s.metrics);
    for (const s of this.sources.values()) for (const h of s.helpers) out.push(h.metrics);
    for (const op of this.operators) out.push(op.metrics);
    for (const s of this.sinks) out.push(...s.metrics);
    return out;
  }
}
