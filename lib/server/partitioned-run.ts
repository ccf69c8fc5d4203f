/**
 * A rule over a partitioned stream in a floe group (docs/group.md): a stream whose
 * DATASOURCE holds `{partition}` (e.g. `telemetry.{partition}.*`, `tele/{partition}/#`) is split
 * into the group's `cluster.partitions` partitions, and each member runs the rule once per
 * partition it owns — one topology per partition, reading only that partition's subject or topic,
 * with its own state. State therefore never mixes partitions, and keyed windows are exact across
 * members when the key determines the partition — or, when it does not, when the rule splits into
 * two stages (plan/two-stage.ts, server/two-stage-run.ts).
 *
 * Each partition's run keeps its checkpoints in the local store under `<rule>.p<n>` (qos ≥ 1) and
 * this module copies every new one into the group's store (cluster/checkpoints.ts). A member that
 * takes a partition over copies the group's newest checkpoint back before the run starts, so the
 * run restores it, and claims it (the group's checkpoint then names the new owner); when the
 * previous owner is still alive (a rebalance, not a death) it first waits for that owner's
 * release, which uploads the state it stopped with.
 *
 * Fencing: the claim is a compare-and-set on the checkpoint's KV revision that starts a new epoch,
 * and each run is fenced by its ownership — it stores no checkpoint, acknowledges nothing and sends
 * no result once its member's lease lapsed or another member claimed the partition, and its `nats`
 * sinks' messages carry the epoch (header `Floe-Epoch`). An upload of a superseded owner is refused
 * by the server; the stale owner then stops that partition's run.
 */
import { FencedError, type ClusterNode, type Held, type PartitionCheckpoint, type ReadCheckpoint } from "../cluster/index.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import { errorText } from "../errors.ts";
import type { StreamDef } from "../plan/streams.ts";
import { checkpointStore } from "../store/checkpoint.ts";
import { ruleSources, type StoredRule } from "../store/stored-rule.ts";
import type { HeldRun, RunExit, Topo } from "./lifecycle.ts";
import { isAggregateCall } from "../plan/analyze.ts";
import { planTwoStage } from "../plan/two-stage.ts";
import type { FunctionRegistry } from "../functions/registry.ts";
import { mergeRuns } from "./partition-metrics.ts";
import { HOLD_FOR_SINKS_MS } from "../runtime/execution.ts";

export const PARTITION_TOKEN = "{partition}";

/** A partitioned stream as a rule reads it. */
export interface Partitioning {
  readonly stream: StreamDef;
  /** Partitions: EXTRA's `partitions`, else the group's `cluster.partitions`. */
  readonly count: number;
  /** EXTRA's `partitionKey`: the field that determines the partition (for the GROUP BY warning). */
  readonly key: string;
}

function extraOf(s: StreamDef): Record<string, unknown> {
  try {
    const v = JSON.parse(s.options.EXTRA ?? "{}") as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The partitioned stream a rule reads (SQL rules only), or undefined. */
export function partitionedStream(def: StoredRule, streams: ReadonlyMap<string, StreamDef>, groupCount: number): Partitioning | undefined {
  if (def.graph !== undefined) return undefined;
  for (const name of ruleSources(def)) {
    const s = streams.get(name);
    if (!s || s.kind !== "stream" || !(s.options.DATASOURCE ?? "").includes(PARTITION_TOKEN)) continue;
    const extra = extraOf(s);
    const n = Number(extra.partitions);
    return { stream: s, count: Number.isInteger(n) && n > 0 ? n : groupCount, key: typeof extra.partitionKey === "string" ? extra.partitionKey : "" };
  }
  return undefined;
}

/**
 * The definitions a run of partition `p` plans with: `{partition}` in the stream's DATASOURCE
 * and EXTRA (e.g. a per-partition durable consumer name) becomes `p`.
 */
export function streamsForPartition(streams: ReadonlyMap<string, StreamDef>, stream: StreamDef, p: number): Map<string, StreamDef> {
  const out = new Map(streams);
  const o = stream.options;
  const sub = (v: string | undefined) => (v === undefined ? undefined : v.replaceAll(PARTITION_TOKEN, String(p)));
  out.set(stream.name, { ...stream, options: { ...o, DATASOURCE: sub(o.DATASOURCE), ...(o.EXTRA !== undefined ? { EXTRA: sub(o.EXTRA) } : {}) } });
  return out;
}

/**
 * The warning for a rule whose GROUP BY lacks the stream's partition key: its groups are then
 * computed per partition, so a key spread over partitions yields one partial group per partition.
 */
export function partitionKeyWarning(def: StoredRule, part: Partitioning): string | undefined {
  if (!part.key || !def.select || def.select.groupBy.length === 0) return undefined;
  const key = part.key.toLowerCase();
  if (def.select.groupBy.some((e) => e.kind === "field" && e.name.toLowerCase() === key)) return undefined;
  return `rule ${def.id}: GROUP BY does not contain ${part.key}, the partition key of stream ${part.stream.name}: each partition computes its own groups`;
}

/** The two-stage split of a rule whose GROUP BY lacks the partition key (plan/two-stage.ts), a reason it has none, or undefined when it needs none. */
export function twoStageOf(def: StoredRule, part: Partitioning, functions: FunctionRegistry): ReturnType<typeof planTwoStage> {
  if (!def.select) return undefined;
  return planTwoStage(def.select, part.key, def.options.isEventTime, isAggregateCall(functions));
}

/**
 * The JetStream durables partition `p` of a `nats` stream reads (EXTRA's `stream` and `durable`,
 * `{partition}` replaced); none when the stream is not JetStream or leaves them to discovery.
 */
export function partitionDurables(stream: StreamDef, p: number): { stream: string; consumer: string }[] {
  if ((stream.options.TYPE ?? "").toLowerCase() !== "nats") return [];
  const extra = extraOf(stream);
  const sub = (v: unknown) => (typeof v === "string" ? v.replaceAll(PARTITION_TOKEN, String(p)) : "");
  const s = sub(extra.stream);
  const d = sub(extra.durable);
  return s && d ? [{ stream: s, consumer: d }] : [];
}

/**
 * The refusal of a partitioned `nats` stream whose partitions would read one JetStream durable
 * (`durableOf(p)`: partition p's resolved `durable`, "" for none): a durable keeps the filter
 * subject it was created with, so the other partitions' runs would read the first one's messages,
 * and each run starting from no read position recreates a durable with unacknowledged deliveries
 * (connectors/nats/consumer.ts) under the reader of another partition started at the same time.
 */
export async function sharedDurableError(stream: StreamDef, count: number, durableOf: (p: number) => Promise<string>): Promise<string | undefined> {
  if (count < 2 || (stream.options.TYPE ?? "").toLowerCase() !== "nats") return undefined;
  const [a, b] = await Promise.all([durableOf(0), durableOf(1)]);
  if (!a || a !== b) return undefined;
  return `stream ${stream.name}: every partition would read JetStream durable ${a}: put ${PARTITION_TOKEN} in EXTRA's durable (e.g. "${a}_${PARTITION_TOKEN}") so that each partition has its own`;
}

/** A partition run's actions under ownership `epoch`: each `nats` sink's messages carry it in header `Floe-Epoch`, so that a consumer can tell a superseded owner's late output. */
export function withEpochHeader(actions: readonly Record<string, unknown>[], epoch: number): Record<string, unknown>[] {
  return actions.map((a) => {
    const props = a.nats;
    if (!props || typeof props !== "object" || Array.isArray(props)) return a;
    const p = props as Record<string, unknown>;
    const headers = p.headers && typeof p.headers === "object" && !Array.isArray(p.headers) ? (p.headers as Record<string, unknown>) : {};
    return { ...a, nats: { ...p, headers: { ...headers, "Floe-Epoch": String(epoch) } } };
  });
}

/** The id of partition `p`'s run: not a valid rule id, so it names no other rule's data. */
export function partitionRunId(rule: string, p: number): string {
  return `${rule}.p${p}`;
}

export interface PartitionedRunOptions {
  readonly def: StoredRule;
  readonly partitions: number;
  readonly cluster: ClusterNode;
  readonly dataDir: string;
  /** The JetStream durables partition `p` reads (restarted when it is taken over with no group checkpoint). */
  readonly durables?: (p: number) => { stream: string; consumer: string }[];
  /** Starts the run of one partition (planned with `streamsForPartition`, id `partitionRunId`) under ownership `epoch`, fenced by `fence`. */
  readonly startPartition: (p: number, epoch: number, fence: () => boolean, onExit: (exit: RunExit) => void) => Promise<HeldRun>;
  readonly onExit: (exit: RunExit) => void;
  /** Whether the rule still exists (a deleted rule's runs leave nothing in the group store). */
  readonly exists: () => boolean;
  readonly log: (line: string) => void;
  /** How often new local checkpoints are copied to the group, ms. */
  readonly uploadEveryMs?: number;
  /** How long a new owner waits for a live previous owner's release, ms. */
  readonly releaseWaitMs?: number;
}

export class PartitionedRun implements HeldRun {
  private readonly runs = new Map<number, { run: HeldRun; held: Held }>();
  /** The state last copied to the group, per partition. */
  private readonly uploaded = new Map<number, string>();
  private chain: Promise<void> = Promise.resolve();
  private unsubscribe: () => void = () => {};
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  private lastNodes: readonly NodeMetrics[] = [];

  constructor(private readonly o: PartitionedRunOptions) {}

  private get id(): string {
    return this.o.def.id;
  }

  /** Starts the runs of the partitions owned now, then follows ownership. */
  async open(): Promise<void> {
    this.unsubscribe = this.o.cluster.onMembers(() => void this.rebalance());
    this.timer = setInterval(() => void this.serial(() => this.tick()), this.o.uploadEveryMs ?? 500);
    await this.rebalance();
  }

  /** Partitions with a run here, ascending. */
  owned(): number[] {
    return [...this.runs.keys()].sort((a, b) => a - b);
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(fn).catch((e) => this.o.log(`rule ${this.id}: ${errorText(e)}`));
    return this.chain;
  }

  private rebalance(): Promise<void> {
    return this.serial(() => this.rebalanceNow());
  }

  /**
   * Applies the ownership the member's view gives now, in three steps, each over all of its
   * partitions at once:
   * 1. take-overs — partitions owned here whose group checkpoint no other live member holds (a
   *    dead owner's, a released one, none yet): claimed, rewound and started first, as their
   *    output stopped with their owner and nothing is to be waited for;
   * 2. releases — partitions the assignment moved away stop and hand their state over (a live
   *    member waits for it);
   * 3. hand-overs — partitions another live member still holds start once it released them (or
   *    the wait ran out); so do the take-overs whose claim lost to another member's write.
   * Releases come before the hand-overs' waits, so two members swapping partitions never each
   * wait for the other's release. At once rather than one after the other: on a quarter core a
   * partition's claim, rewind and start take about 1 s, much of it waiting on NATS, and the last
   * of a dead member's partitions started seconds after its first. Each step waits until every
   * one of its partitions is done (failures logged one by one, the others unaffected): no start
   * or stop of this apply runs on once the chain moves on to a tick, the next apply or stop(),
   * and a partition is never started twice.
   */
  private async rebalanceNow(): Promise<void> {
    if (this.stopped) return;
    const want = new Set(this.o.cluster.owned(this.o.partitions));
    const leaving = [...this.runs.keys()].filter((p) => !want.has(p));
    const missing = [...want].filter((p) => !this.runs.has(p));
    const found = await this.each(missing, async (p) => ({ p, at: await this.o.cluster.checkpoints.read(this.id, p) }));
    const free = found.filter(({ at }) => !this.heldElsewhere(at.checkpoint));
    const waits = found.filter(({ at }) => this.heldElsewhere(at.checkpoint)).map(({ p }) => p);
    await this.each(free, async ({ p, at }) => {
      try {
        await this.start(p, at);
      } catch (e) {
        if (!(e instanceof FencedError)) throw e;
        // Another member wrote the manifest after it was read here: read again in step 3.
        this.o.log(`rule ${this.id}: partition ${p}: ${e.message}`);
        waits.push(p);
      }
    });
    await this.releaseAll(leaving);
    await this.each(waits, (p) => this.acquire(p));
  }

  /** Runs `fn` for every item at once, until every one is done; the values of those that succeeded (each failure is logged as it comes). */
  private async each<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
    const out: R[] = [];
    const log = (e: unknown) => this.o.log(`rule ${this.id}: ${errorText(e)}`);
    await Promise.all(items.map((x) => fn(x).then((v) => void out.push(v), log)));
    return out;
  }

  /** Whether partition `p` is this member's to start now. */
  private mine(p: number): boolean {
    return !this.stopped && this.o.cluster.owned(this.o.partitions).includes(p);
  }

  /** Whether a checkpoint is held by another live member that has not released it (a rebalance under way, not a death). */
  private heldElsewhere(cp: PartitionCheckpoint | undefined): boolean {
    const { cluster } = this.o;
    return !!cp && !cp.released && cp.owner !== cluster.instance && cluster.members.isLive(cp.owner);
  }

  /** Each upload period: superseded runs stop; the others' new checkpoints go to the group; a partition owned here without a run (it was fenced) is claimed again. */
  private async tick(): Promise<void> {
    let fenced = false;
    for (const [p, { held }] of [...this.runs]) {
      if (held.valid) continue;
      fenced = true;
      await this.release(p);
    }
    await this.uploadAll();
    if (fenced || this.runs.size !== this.o.cluster.owned(this.o.partitions).length) await this.rebalanceNow();
  }

  /** Starts partition `p` once no other live member holds it; a claim lost to another member's (their views of the members differed for a moment) reads again and waits for its release. */
  private async acquire(p: number): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const at = await this.released(p);
        if (!at) return;
        return await this.start(p, at);
      } catch (e) {
        if (!(e instanceof FencedError)) throw e;
        this.o.log(`rule ${this.id}: partition ${p}: ${e.message}`);
      }
    }
  }

  /**
   * Partition `p`'s group checkpoint once the live member holding it stopped the partition and
   * released the state it stopped with (at most releaseWaitMs); undefined when `p` stopped being
   * this member's to start meanwhile.
   */
  private async released(p: number): Promise<ReadCheckpoint | undefined> {
    const { checkpoints } = this.o.cluster;
    let at = await checkpoints.read(this.id, p);
    const deadline = Date.now() + (this.o.releaseWaitMs ?? 5000);
    while (this.heldElsewhere(at.checkpoint) && Date.now() < deadline) {
      await Bun.sleep(100);
      if (!this.mine(p)) return undefined;
      at = await checkpoints.read(this.id, p);
    }
    return at;
  }

  /**
   * Claims partition `p` on the checkpoint read in `at` — the claim is conditional on that read's
   * revision: FencedError when another member wrote the manifest since — and starts its run from it.
   */
  private async start(p: number, at: ReadCheckpoint): Promise<void> {
    const { cluster } = this.o;
    const runId = partitionRunId(this.id, p);
    const cp = at.checkpoint;
    // An empty state is a claim (below) of an owner that had no checkpoint in the group yet.
    const state = cp?.state ? cp.state : undefined;
    if (!this.mine(p)) return;
    // Claimed before the run starts, with the state it starts from: from now on the group's
    // checkpoint names this member, unreleased, until its own uploads and its release. Otherwise
    // a member joining meanwhile would find the previous owner's checkpoint — its own from before
    // a kill -9 when it comes back under the same id, or a release from an earlier ownership —
    // and start from it at once instead of waiting for this member's release. With no state, it
    // also keeps a joining member from reading the same durable at once (below). The claim is a
    // compare-and-set on the revision read: of two members claiming at once, one wins, the other reads again.
    // (qos 0 keeps no checkpoints, yet claims too: its epoch fences its results.)
    const held = await cluster.checkpoints.claim(this.id, p, state ?? "", at.basis);
    const local = checkpointStore(this.o.dataDir);
    // The group's checkpoint is the truth: a local one is from an earlier ownership at best.
    local.clear(runId);
    if (state) local.save(runId, state, cp!.ts);
    this.uploaded.set(p, state ?? "");
    if (this.stopped) {
      // stop() came during the claim: hand the partition back at once rather than leave a claim no run holds.
      await this.upload(p, held, true);
      return;
    }
    if (state) {
      const { jetStreamOffsets, rewindConsumer } = await import("../cluster/rewind.ts");
      // Messages the previous owner acknowledged after its last checkpoint that reached the group are delivered again.
      for (const o of jetStreamOffsets(state)) {
        if (await rewindConsumer(cluster.nc, o).catch((e) => (this.o.log(`rule ${this.id}: cannot rewind consumer ${o.stream}/${o.consumer}: ${errorText(e)}`), false)))
          this.o.log(`rule ${this.id}: partition ${p}: consumer ${o.stream}/${o.consumer} ${o.seq > 0 ? `rewound to sequence ${o.seq + 1}, the checkpoint's` : "restarted from its start: the checkpoint read nothing of it yet"}`);
      }
    } else if (this.o.def.options.qos >= 1) {
      // No checkpoint reached the group: the state starts empty, so the partition is read from its
      // start again — a previous owner killed before its first upload may have acknowledged some of it.
      for (const d of this.o.durables?.(p) ?? []) {
        const { restartConsumer } = await import("../cluster/rewind.ts");
        if (await restartConsumer(cluster.nc, d.stream, d.consumer).catch((e) => (this.o.log(`rule ${this.id}: cannot restart consumer ${d.stream}/${d.consumer}: ${errorText(e)}`), false)))
          this.o.log(`rule ${this.id}: partition ${p}: consumer ${d.stream}/${d.consumer} restarted from its start: no checkpoint in the group`);
      }
    }
    const members = cluster.members;
    const fence = () => held.valid && members.holdsLease();
    const run = await this.o.startPartition(p, held.epoch, fence, (exit) => {
      // One partition failing stops the rule, as a single run's failure does; an end of input ends that partition only.
      if (exit.kind === "error") this.o.onExit(exit);
    });
    // Registered even when stop() came meanwhile: its step, next in the chain, releases it with the rest.
    this.runs.set(p, { run, held });
    this.o.log(`rule ${this.id}: partition ${p} started here (epoch ${held.epoch})${state ? ` from the checkpoint ${cp!.owner} saved` : ""}`);
  }

  /** Stops the runs of partitions `ps` at once and hands their states over. */
  private async releaseAll(ps: readonly number[]): Promise<void> {
    const stopping = ps.flatMap((p) => this.runs.get(p)?.run ?? []);
    await this.each(ps, (p) => this.release(p));
    // The metrics shown once no run is left: the runs stopped last, all of them.
    if (stopping.length > 0 && this.runs.size === 0) this.lastNodes = mergeRuns(stopping);
  }

  /**
   * Stops partition `p`'s run and hands its state over; a superseded ownership (another member
   * claimed it) uploads nothing. The run's input is held until its sinks delivered what they were
   * given (at most HOLD_FOR_SINKS_MS) before it stops: results a sink does not deliver within its
   * grace at close are gone, and a next owner restored from a checkpoint counting them would not
   * make them again, so the run stores none at its stop unless they settled (Execution.stop). When
   * they did not settle, the state handed over is the one last uploaded (taken while they were
   * settled): the next owner rewinds the durable to it and makes those results again.
   */
  private async release(p: number): Promise<void> {
    const r = this.runs.get(p);
    if (!r) return;
    this.runs.delete(p);
    // A superseded ownership or a deleted rule hands nothing over: nothing to hold for.
    const handsOver = r.held.valid && this.o.exists();
    const settled = handsOver && r.run.holdForSinks ? await r.run.holdForSinks(HOLD_FOR_SINKS_MS) : true;
    await r.run.stop();
    if (this.runs.size === 0) this.lastNodes = mergeRuns([r.run]);
    if (!r.held.valid) {
      this.o.log(`rule ${this.id}: partition ${p} stopped here: another member claimed it (epoch ${r.held.epoch} is superseded)`);
      return;
    }
    if (settled || !this.o.exists()) return this.upload(p, r.held, true);
    this.o.log(`rule ${this.id}: partition ${p}: its sinks did not settle before it stopped; handing over the checkpoint last uploaded`);
    try {
      await this.o.cluster.checkpoints.save(this.id, p, this.uploaded.get(p) ?? "", true);
    } catch (e) {
      if (!(e instanceof FencedError)) throw e;
      this.o.log(`rule ${this.id}: ${e.message}`);
    }
  }

  /**
   * Copies partition `p`'s newest local checkpoint to the group when it changed (`released`: the
   * last one of this ownership). Refused when another member claimed the partition meanwhile
   * (counted by cluster/checkpoints.ts): the run is then stopped by the next tick.
   */
  private async upload(p: number, held: Held, released: boolean): Promise<void> {
    if (!this.o.exists() || !held.valid) return;
    const state = checkpointStore(this.o.dataDir).latest(partitionRunId(this.id, p)) ?? (released ? "" : undefined);
    // Released with no checkpoint of its own: the empty release still ends the new owner's wait.
    if (state === undefined) return;
    if (state === this.uploaded.get(p) && !released) return;
    try {
      await this.o.cluster.checkpoints.save(this.id, p, state, released);
    } catch (e) {
      if (!(e instanceof FencedError)) throw e;
      this.o.log(`rule ${this.id}: ${e.message}`);
      return;
    }
    this.uploaded.set(p, state);
  }

  /**
   * Each tick's uploads: every partition's newest local checkpoint, as it is. A partition run stores
   * a checkpoint only once every result its sinks were given before the snapshot is delivered and
   * confirmed (runtime/checkpoint.ts, the barrier of a group's partition), so no checkpoint here
   * counts a window whose results a member killed now would lose — the next owner, restored from
   * it, would not make them again — and none waits for the sinks to be idle. The partitions upload
   * at once, not one after the other: the tick holds the chain that acquisitions wait in, and a
   * member owning many partitions would keep it for the sum of their round trips.
   */
  private async uploadAll(): Promise<void> {
    const ups: Promise<void>[] = [];
    for (const [p, { held }] of this.runs) ups.push(this.upload(p, held, false));
    const failed = (await Promise.allSettled(ups)).find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  /** The runs' metrics added up node by node (every run has the same plan). */
  nodes(): readonly NodeMetrics[] {
    return this.runs.size === 0 ? this.lastNodes : mergeRuns([...this.runs.values()].map((r) => r.run));
  }

  topo(): Topo {
    const first = this.runs.values().next().value;
    return first ? first.run.topo() : { sources: [], edges: {} };
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    clearInterval(this.timer);
    // Seen at once by an apply under way: hand-overs stop waiting, a claim not started yet is handed back.
    this.stopped = true;
    await this.serial(() => this.releaseAll([...this.runs.keys()]));
  }
}
