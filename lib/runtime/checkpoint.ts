/**
 * The checkpoint coordinator of a rule run with qos ≥ 1 (rules-and-sinks.md §5). Every
 * `checkpointInterval` it snapshots the topology and the read positions of the rule's rewindable
 * sources and stores them as one complete checkpoint in `<data>/checkpoint.db`; at start the
 * newest one is loaded before any input is read.
 *
 * No barriers flow through the operators: the topology is a synchronous push chain and the timer
 * is a macrotask, so it never runs inside an inlet's drain — every operator is between two
 * batches, and the snapshot is consistent. qos 1 and qos 2 therefore behave the same here.
 *
 * But for an operator spreading one item's rows across turns (a big window's grouping, filter or
 * projection: Topology.busy): part of its state is then in that item, in no snapshot. Finishing
 * it inside the timer's task held the event loop for the whole rest of the item; instead the tick
 * holds the rule's input (InputHold: the drains take nothing, so no new item queues behind the
 * one spread) and polls until no operator is busy — the spread ends in its own turns, in bounded
 * time, since nothing new enters — and snapshots then, letting the input go.
 *
 * The barrier is at the sinks, by count. A snapshot may count windows already closed whose
 * results the sinks still hold; stored then, a kill -9 would lose those results — the restored run
 * does not make them again, and the sources acknowledged their input. So each snapshot records how
 * many results every sink had been given when it was taken (SinkPipeline.given), and it is stored
 * once every sink's watermark (SinkPipeline.safe: the leading results delivered, or written
 * through to its cache) reaches that count — while later results are still in flight. A sink read
 * flat out always has publishes awaiting their acknowledgement: waiting for a moment with none
 * delayed checkpoints, and so the sources' acknowledgements, by seconds.
 *
 * At most one snapshot waits. The next tick takes no new one while it does: its barrier is fixed
 * when it is taken, so it passes once the sinks deliver what they had then (later results do not
 * move it), and the next snapshot follows at the next tick. Replacing a waiting snapshot with a
 * newer one instead could starve: against a sink slower than the interval no snapshot would ever
 * pass its barrier before being replaced.
 *
 * The barrier of a group's partition run counts delivered results only (SinkPipeline.safe(true),
 * runtime/execution.ts): its checkpoints go to the group as they are stored (server/partitioned-run.ts
 * uploads the newest local one), and another member, with no copy of this member's cache,
 * restores them after a failover.
 */
import type { Level } from "../log.ts";
import { errorText } from "../errors.ts";
import type { SelectStatement } from "../sql/ast.ts";
import type { CheckpointStore } from "../store/checkpoint.ts";
import { decodeState, encodeState } from "../store/state-codec.ts";
import type { Topology } from "./topology.ts";

/** A checkpoint as stored: the rule shape it belongs to, node states, source offsets (`$$offset`), sink states. */
interface Saved {
  readonly fp: string;
  readonly ops: Record<string, unknown>;
  readonly sources: Record<string, { $$offset: unknown }>;
  /** Absent in checkpoints of older floe versions. */
  readonly sinks?: Record<string, unknown>;
}

/** The read position of each rewindable source of the run, by stream name. */
export type OffsetReader = () => Record<string, unknown>;

/** The rule's sinks as the barrier reads them (SinkPipeline.given / safe). */
export interface SinkBarrier {
  /** Each sink's count of the results it was given so far. */
  given(): number[];
  /** Every sink's watermark has reached its count in `marks` (a `given()` of earlier). */
  passed(marks: readonly number[]): boolean;
}

/** The barrier of a run without sinks to wait for. */
const NO_SINKS: SinkBarrier = { given: () => [], passed: () => true };

/** The rule's input, held while a tick waits for the operators to end a spread (see above). */
export interface InputHold {
  hold(): void;
  release(): void;
}

/** A run whose input is not the checkpoint's to hold. */
const NO_HOLD: InputHold = { hold() {}, release() {} };

/** A snapshot as taken, waiting for its barrier or being stored. */
interface Snap {
  /** The operators' states and the sources' offsets, encoded as taken. */
  readonly ops: string;
  readonly sources: string;
  /**
   * The sinks' states, encoded when stored: a keyed sink's count of item keys goes on until the
   * results the snapshot covers are made into items (SinkPipeline.snapshot), which the barrier awaits.
   */
  readonly sinks: Record<string, unknown>;
  /** The sinks' `given` counts when it was taken. */
  readonly marks: readonly number[];
}

export class Checkpointer {
  private timer: ReturnType<typeof setInterval> | undefined;
  /** The fingerprint of the rule's shape: a checkpoint of another shape is not restored. */
  readonly fp: string;
  /** `restore` found a checkpoint of this shape and loaded it. */
  restored = false;

  constructor(
    private readonly ruleId: string,
    private readonly store: CheckpointStore,
    select: SelectStatement,
    windowEvaluator: string,
    private readonly log: (line: string, level?: Level) => void,
    /** False while the run may not act as its input's owner (a group partition whose lease lapsed): nothing is stored. */
    private readonly fence: () => boolean = () => true,
    /** The sinks' counts and watermarks (see above). */
    private readonly sinks: SinkBarrier = NO_SINKS,
    /** What a tick holds while an operator ends a spread (see above). */
    private readonly input: InputHold = NO_HOLD,
  ) {
    // A checkpoint only fits the rule it was taken from: an updated SQL starts from scratch.
    this.fp = Bun.hash(encodeState(select) + "\u0000" + windowEvaluator).toString(36);
  }

  /** Loads the newest checkpoint into `topo`; returns the saved source offsets by stream. */
  restore(topo: Topology): Map<string, unknown> {
    const offsets = new Map<string, unknown>();
    const text = this.store.latest(this.ruleId);
    if (text === undefined) return offsets;
    const saved = decodeState(text) as Saved;
    if (saved.fp !== this.fp) {
      this.log(`rule ${this.ruleId}: the last checkpoint belongs to another version of the rule, starting without state`);
      return offsets;
    }
    topo.restore(saved.ops);
    if (saved.sinks) topo.restoreSinks(saved.sinks);
    this.restored = true;
    for (const [stream, o] of Object.entries(saved.sources)) offsets.set(stream, o.$$offset);
    return offsets;
  }

  /** Takes a checkpoint every `intervalMs`; `onSaved` runs after each one stored. */
  start(intervalMs: number, topo: Topology, offsets: OffsetReader, onSaved?: () => void): void {
    this.timer = setInterval(() => this.tick(topo, offsets, onSaved), Math.max(1, intervalMs));
  }

  /** A snapshot waiting for its barrier before it is stored (see above). */
  private waiting: Snap | undefined;
  private poll: ReturnType<typeof setTimeout> | undefined;
  /** The poll of a tick that holds the input until no operator is busy (see above). */
  private settling: ReturnType<typeof setTimeout> | undefined;

  private tick(topo: Topology, offsets: OffsetReader, onSaved?: () => void): void {
    // The previous snapshot still waits for its barrier (or for a spread to end): it is stored first, then the next is taken.
    if (this.waiting || this.settling !== undefined || !this.fence()) return;
    if (!topo.busy) {
      this.checkpoint(topo, offsets, onSaved);
      return;
    }
    this.input.hold();
    const settle = (): void => {
      if (topo.busy) {
        this.settling = setTimeout(settle, 2);
        return;
      }
      this.settling = undefined;
      try {
        if (this.fence()) this.checkpoint(topo, offsets, onSaved);
      } finally {
        this.input.release();
      }
    };
    this.settling = setTimeout(settle, 2);
  }

  /** Snapshots now (no operator busy) and stores it once its barrier passed. */
  private checkpoint(topo: Topology, offsets: OffsetReader, onSaved?: () => void): void {
    const snap = this.snapshot(topo, offsets);
    if (!snap) return;
    if (this.sinks.passed(snap.marks)) {
      if (this.save(snap)) onSaved?.();
      return;
    }
    this.waiting = snap;
    const retry = (): void => {
      this.poll = undefined;
      const w = this.waiting;
      if (!w) return;
      if (!this.sinks.passed(w.marks)) {
        this.poll = setTimeout(retry, 2);
        return;
      }
      this.waiting = undefined;
      if (this.fence() && this.save(w)) onSaved?.();
    };
    this.poll = setTimeout(retry, 2);
  }

  /**
   * A stop's final checkpoint (true when stored): snapshots now and stores it if its barrier has
   * passed already — the stop held its input for the sinks first (Execution.stop); else the one
   * stored last stays. A failure is logged and the rule goes on.
   */
  take(topo: Topology, offsets: OffsetReader): boolean {
    if (!this.fence()) return false;
    if (topo.busy) {
      this.log(`rule ${this.ruleId}: an operator was still spreading an item across turns when it stopped: no checkpoint at stop, the one stored last stays`);
      return false;
    }
    const snap = this.snapshot(topo, offsets);
    if (snap === undefined) return false;
    if (this.sinks.passed(snap.marks)) return this.save(snap);
    this.log(`rule ${this.ruleId}: its sinks did not deliver what they were given before it stopped: no checkpoint at stop, the one stored last stays`);
    return false;
  }

  private snapshot(topo: Topology, offsets: OffsetReader): Snap | undefined {
    try {
      const sources: Record<string, { $$offset: unknown }> = {};
      for (const [stream, o] of Object.entries(offsets())) sources[stream] = { $$offset: o };
      return { ops: encodeState(topo.snapshot()), sources: encodeState(sources), sinks: topo.sinkState(), marks: this.sinks.given() };
    } catch (e) {
      this.log(`rule ${this.ruleId}: checkpoint failed: ${errorText(e)}`, "warn");
      return undefined;
    }
  }

  private save(snap: Snap): boolean {
    try {
      // A `Saved` as encodeState writes it, the parts encoded apart.
      const state = `{"fp":${JSON.stringify(this.fp)},"ops":${snap.ops},"sources":${snap.sources},"sinks":${encodeState(snap.sinks)}}`;
      this.store.save(this.ruleId, state, Date.now());
      this.log(`rule ${this.ruleId}: checkpoint saved (${state.length} characters of state, sources ${snap.sources})`, "debug");
      return true;
    } catch (e) {
      this.log(`rule ${this.ruleId}: checkpoint failed: ${errorText(e)}`, "warn");
      return false;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    // A snapshot still waiting for its barrier is dropped: a stop's final checkpoint supersedes it.
    clearTimeout(this.poll);
    this.poll = undefined;
    this.waiting = undefined;
    if (this.settling !== undefined) {
      clearTimeout(this.settling);
      this.settling = undefined;
      this.input.release();
    }
  }
}
