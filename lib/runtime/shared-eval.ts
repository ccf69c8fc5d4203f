/**
 * Shared evaluation: the rules of a shared stream whose chains are the same (the same SELECT, the
 * same options, over the same stream) evaluate each message once. The leader of the group's drain
 * (drain-group.ts), while members follow it, runs a message through its chain as usual and records
 * on the message what it did — every node's counts and the items its last node pushed into the
 * sinks; each member replays that: its nodes count the same, at its own time, and its sinks
 * receive the same items (read-only: the sink machinery copies what it changes). A message holds
 * its group's record only while the leader's batch is handed out (`SourceMessage.outcome`): the
 * members replay it right after the leader's batch, and the leader takes it back before another
 * group's leader takes the message. A rule that changes gets another key; a rule alone in its
 * group records nothing.
 *
 * Only what cannot differ between the rules is shared: one-row messages, decoded by the stream's
 * one decoder, through a chain of decoder → WHERE → SELECT without a function call or a meta
 * reference (no clock, rule id or state); a message on which a node of the chain failed is not
 * shared (each rule evaluates it alone, so each counts its error with its own payload preview), nor
 * is anything a traced or peeked rule takes.
 */
import { RowError } from "../errors.ts";
import type { Consumer, Item } from "../core/item.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import type { Operator } from "../core/operator.ts";
import { DecoderOp } from "../ops/decoder.ts";
import { FilterOp } from "../ops/filter.ts";
import { ProjectOp } from "../ops/project.ts";
import type { RuleOptions } from "../plan/rule-options.ts";
import type { StreamDef } from "../plan/streams.ts";
import type { SelectStatement } from "../sql/ast.ts";
import { isPureSelect } from "../sql/pure.ts";
import type { SourceMessage } from "../source/message.ts";
import type { Obj } from "../value/values.ts";
import type { Inlet } from "./inlet.ts";
import { GroupTally, type Mark } from "./group-tally.ts";
import type { SourceNode, Topology } from "./topology.ts";

/** What one message did to a group's chain: per node, records in, out and processed; what reached the sinks. */
export class Outcome {
  readonly items: Item[] = [];
  constructor(
    /** The group that recorded it: a message keeps the last group's outcome only. */
    readonly key: string,
    readonly counts: Int32Array,
    readonly latency: Float64Array,
  ) {}
}

/**
 * What a whole batch of the leader's did, when the group shared every message of it: the counts
 * summed per node, each node's latency sample of its last message, every item in order. A member
 * replays it in one go (`replayBatch`) instead of message by message.
 */
export class BatchOutcome {
  readonly items: Item[] = [];
  buf: readonly SourceMessage[] | null = null;
  n = 0;
  constructor(
    readonly counts: Float64Array,
    readonly latency: Float64Array,
  ) {}
}

/**
 * A group key, held once for all the running rules of the group (so the members look their
 * outcome up with the same string, and the lookup compares no text), with the batch the leader
 * hands out meanwhile. Counted, so a key goes with its last rule.
 */
class GroupKey {
  refs = 0;
  batch: BatchOutcome | null = null;
  constructor(readonly key: string) {}
}

/** Messages this process's rules took by replaying a group's outcome instead of evaluating it (tests, diagnostics). */
export const sharedStats = { replays: 0, records: 0, batches: 0 };

/** JSON of a definition, bigints as their text (throws on a cycle). */
export function text(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? `${x}n` : x));
}

/**
 * The group key of a rule reading one shared stream, or undefined when its chain is not shared:
 * the stream's definition, the SELECT and the options.
 */
export function sharedKey(select: SelectStatement, def: StreamDef, options: RuleOptions, ignoreCase: boolean): string | undefined {
  if (!def.options.SHARED || select.joins.length > 0 || !isPureSelect(select)) return undefined;
  try {
    return text([def.name, def.statement, ignoreCase, select, options]);
  } catch {
    // A definition JSON cannot hold (a cycle): the rule evaluates alone.
    return undefined;
  }
}

/** The group keys of the running rules. */
const keys = new Map<string, GroupKey>();

/** Collects what the chain's last node pushes while it passes it on. */
class Capture implements Consumer {
  items: Item[] = [];
  constructor(readonly next: Consumer) {}
  push(item: Item): void {
    this.items.push(item);
    this.next.push(item);
  }
}

/** One rule's side of its group: records an outcome on a message, or replays the one recorded. */
export class SharedEval {
  private readonly source: SourceNode;
  private readonly nodes: NodeMetrics[];
  private readonly tail: Operator;
  private readonly out: Consumer;
  /** The recorder's outcomes, reused batch after batch (`batchDone`): `used` of them hold this batch's. */
  private pool: Outcome[] | undefined = undefined;
  private used = 0;
  /** The recorder's scratch, made at its first record (only a leader records). */
  private capture: Capture | undefined = undefined;
  private before: Float64Array | undefined = undefined;
  /** The recorder's batch summary, made at its first (`summarize`). */
  private whole: BatchOutcome | undefined = undefined;
  /** What this rule has counted of its drain group's tally (group-tally.ts), while it is a lazy member. */
  private mark: Mark = GroupTally.start;
  readonly key: string;

  private constructor(
    private readonly k: GroupKey,
    private readonly topo: Topology,
    chain: { source: SourceNode; ops: Operator[]; out: Consumer },
  ) {
    this.key = k.key;
    this.source = chain.source;
    this.nodes = chain.ops.map((o) => o.metrics);
    this.tail = chain.ops[chain.ops.length - 1]!;
    this.out = chain.out;
  }

  /** A rule's side of its group, or undefined when its chain is not one a group can share. */
  static of(key: string | undefined, topo: Topology, stream: string): SharedEval | undefined {
    if (key === undefined) return undefined;
    const chain = topo.chain(stream);
    if (!chain || chain.ops.length < 2 || !(chain.ops[0] instanceof DecoderOp)) return undefined;
    for (let i = 1; i < chain.ops.length; i++) {
      const op = chain.ops[i]!;
      const ok = op instanceof ProjectOp || (op instanceof FilterOp && op.where !== undefined);
      if (!ok) return undefined;
    }
    let k = keys.get(key);
    if (k === undefined) keys.set(key, (k = new GroupKey(key)));
    k.refs++;
    return new SharedEval(k, topo, chain);
  }

  /** The rule's run ends: it leaves its group. */
  close(): void {
    const k = this.k;
    if (--k.refs === 0 && keys.get(this.key) === k) keys.delete(this.key);
  }

  /**
   * Ingests `rows`, the decoded message `m`, at `now`: replays the group's outcome of it, or (the
   * group's leader, `records`) runs the chain through `inlet` and records what it did on `m`.
   * False: the message is not one the group shares; the caller ingests it itself.
   */
  run(m: SourceMessage, rows: Obj | Obj[], now: number, inlet: Inlet, records: boolean): boolean {
    if ((Array.isArray(rows) && rows.length !== 1) || this.topo.peeked || this.tail.next !== this.out) return false;
    const had = m.outcome as Outcome | null;
    if (had !== null && had.key === this.key) {
      sharedStats.replays++;
      this.replay(had, now);
      return true;
    }
    if (!records) return false;
    // Unshared until recorded: should the chain throw, each rule evaluates the message alone.
    m.outcome = null;
    sharedStats.records++;
    m.outcome = this.record(rows, m.meta, now, inlet);
    return true;
  }

  private record(rows: Obj | Obj[], meta: Obj | null, now: number, inlet: Inlet): Outcome | null {
    const nodes = this.nodes;
    const b = (this.before ??= new Float64Array(nodes.length * 4));
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i]!;
      b[i * 4] = n.recordsIn;
      b[i * 4 + 1] = n.recordsOut;
      b[i * 4 + 2] = n.messagesProcessed;
      b[i * 4 + 3] = n.exceptions;
    }
    const pool = (this.pool ??= []);
    const o = (pool[this.used] ??= new Outcome(this.key, new Int32Array(nodes.length * 3), new Float64Array(nodes.length)));
    this.used++;
    o.items.length = 0;
    const cap = (this.capture ??= new Capture(this.out));
    cap.items = o.items;
    this.tail.next = cap;
    try {
      inlet.ingest(rows, meta, now, true);
    } finally {
      this.tail.next = this.out;
    }
    const counts = o.counts;
    const latency = o.latency;
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i]!;
      if (n.exceptions !== b[i * 4 + 3]) return null;
      counts[i * 3] = n.recordsIn - b[i * 4]!;
      counts[i * 3 + 1] = n.recordsOut - b[i * 4 + 1]!;
      counts[i * 3 + 2] = n.messagesProcessed - b[i * 4 + 2]!;
      latency[i] = n.processLatencyUs;
    }
    for (const it of o.items) if (it instanceof RowError) return null;
    return o;
  }

  /**
   * The leader's batch `buf[0..n)` was handed out: what it recorded on the messages is taken back
   * (a member that takes one of them later evaluates it alone), and its outcomes are free again.
   */
  batchDone(buf: readonly SourceMessage[], n: number): void {
    const w = this.k.batch;
    if (w !== null && w === this.whole) {
      this.k.batch = null;
      w.buf = null;
      w.items.length = 0;
    }
    if (this.used === 0) return;
    for (let i = 0; i < n; i++) {
      const m = buf[i]!;
      const o = m.outcome as Outcome | null;
      if (o !== null && o.key === this.key) m.outcome = null;
    }
    const pool = this.pool!;
    for (let i = 0; i < this.used; i++) pool[i]!.items.length = 0;
    this.used = 0;
  }

  /**
   * The leader's batch `buf[0..n)` was processed: when the group shared every message of it, its
   * summary is left on the group's key for the members to replay in one go (`replayBatch`) while
   * the batch is handed out (`batchDone` takes it back).
   */
  summarize(buf: readonly SourceMessage[], n: number): BatchOutcome | null {
    const key = this.key;
    for (let i = 0; i < n; i++) {
      const o = buf[i]!.outcome as Outcome | null;
      if (o === null || o.key !== key) return null;
    }
    const len = this.nodes.length;
    const w = (this.whole ??= new BatchOutcome(new Float64Array(len * 3), new Float64Array(len)));
    const sum = w.counts;
    const lat = w.latency;
    sum.fill(0);
    const items = w.items;
    items.length = 0;
    for (let j = 0; j < n; j++) {
      const o = buf[j]!.outcome as Outcome;
      const c = o.counts;
      for (let i = 0; i < len; i++) {
        const dIn = c[i * 3]!;
        if (dIn === 0) continue;
        sum[i * 3] += dIn;
        sum[i * 3 + 1] += c[i * 3 + 1]!;
        sum[i * 3 + 2] += c[i * 3 + 2]!;
        lat[i] = o.latency[i]!;
      }
      for (const it of o.items) items.push(it);
    }
    w.buf = buf;
    w.n = n;
    this.k.batch = w;
    return w;
  }

  /** The rule's shared source node counts through this rule (a drain group's eager member). */
  get countsSource(): boolean {
    return this.source.counts;
  }

  /** The rule begins counting through `t` (it parks as a lazy member): what `t` holds now is not its own. */
  markTally(t: GroupTally): void {
    this.mark = t.now();
  }

  /**
   * Adds to the rule's nodes what `t` counted since the rule last looked (nothing when `apply` is
   * false: its run stopped counting); returns the messages taken since.
   */
  catchUp(t: GroupTally, apply: boolean): number {
    const r = t.catchUp(this.mark, this.nodes, apply);
    this.mark = r.mark;
    return r.msgs;
  }

  /** Pushes a shared batch's items into the rule's sinks (a lazy member, whose nodes the group's tally counts). */
  pushItems(items: readonly Item[]): void {
    const out = this.out;
    for (let i = 0; i < items.length; i++) out.push(items[i]!);
  }

  /**
   * Replays the leader's whole batch `buf[0..n)` at `now` when the group shared every message of
   * it (`summarize`): each node counts the batch's sums, the sinks get its items in order. False:
   * the caller takes the messages one by one.
   */
  replayBatch(buf: readonly SourceMessage[], n: number, now: number): boolean {
    const w = this.k.batch;
    if (w === null || w.buf !== buf || w.n !== n || this.topo.peeked || this.tail.next !== this.out) return false;
    sharedStats.batches++;
    sharedStats.replays += n;
    const src = this.source;
    if (src.counts) {
      const m = src.metrics;
      m.recordsIn += n;
      m.recordsOut += n;
      m.messagesProcessed += n;
      m.lastInvocation = now;
    }
    const nodes = this.nodes;
    const c = w.counts;
    for (let i = 0; i < nodes.length; i++) {
      const nd = nodes[i]!;
      const dIn = c[i * 3]!;
      if (dIn === 0) continue;
      nd.recordsIn += dIn;
      nd.recordsOut += c[i * 3 + 1]!;
      nd.messagesProcessed += c[i * 3 + 2]!;
      nd.lastInvocation = now;
      if (i > 0) nd.processLatencyUs = w.latency[i]!;
    }
    this.pushItems(w.items);
    return true;
  }

  /** What the rule's own chain would have done with the message: counted on its nodes, pushed to its sinks. */
  private replay(o: Outcome, now: number): void {
    const src = this.source;
    if (src.counts) src.metrics.passed(now);
    const nodes = this.nodes;
    const c = o.counts;
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i]!;
      const dIn = c[i * 3]!;
      if (dIn === 0) continue;
      n.recordsIn += dIn;
      n.recordsOut += c[i * 3 + 1]!;
      n.messagesProcessed += c[i * 3 + 2]!;
      n.lastInvocation = now;
      // The decoder node's latency is the decode's (the drain's); an operator's, the recorder's sample.
      if (i > 0) n.processLatencyUs = o.latency[i]!;
    }
    this.pushItems(o.items);
  }
}
