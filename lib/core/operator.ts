/**
 * The operator contract (STYLE: most.js-like `push`): every plan node is an Operator with the
 * same shape. Failures are caught once per item here, counted in the node's metrics, and
 * forwarded downstream as an error item when the rule has `sendError`. This is the rule's error
 * boundary: anything an item makes a node throw (a RowError, an engine bug, a stack overflow on
 * a deep value) fails that item only, with a message, and the rule goes on.
 *
 * A node may spread one item's work across event-loop turns (`spreadRows`, under the turn budget of
 * core/turn.ts, OpEnv.turnMs a turn): items pushed meanwhile wait behind it, so order is what one
 * pass gives, and `complete` runs the rest at once (at the end). A checkpoint is not taken while a
 * node is `busy` (runtime/checkpoint.ts): it waits for the spread to end in its own turns. What
 * waits is bounded as a sink's queue is: the node's `room` (WAITING_ITEMS less what waits) is one
 * of the gates the rule's drains ask (runtime/execution.ts), and its `onRoom` wakes them, so the
 * input behind a long spread stays in the source's bounded buffer.
 */
import { failureText, RowError } from "../errors.ts";
import { Collection, Watermark, type Consumer, type Item, type Loan, type Ownership } from "./item.ts";
import { valuePreview } from "./error-groups.ts";
import { NodeMetrics } from "./metrics.ts";
import { DRAIN_STEP, ROWS_PER_LOOK, Turn, WHOLE } from "./turn.ts";

/**
 * Items that may wait behind a spread before the rule's drains stop taking input: a drain step's
 * worth, so a rule with nothing spread takes its full steps (a drain takes no more messages than
 * the room, but each of a message's rows may wait).
 */
export const WAITING_ITEMS = DRAIN_STEP;

/** Shared per-rule runtime facts operators read (the clock's current time, options). */
export interface OpEnv {
  now(): number;
  readonly sendError: boolean;
  /** Told of every record failure after it is counted (pipe mode's stderr report); called only on errors. */
  readonly onRowError?: (message: string) => void;
  /**
   * The time (ms) a node may spend on one item in one event-loop turn before the rest of the item
   * waits for a later turn (a wall-clock run, where other rules and sources share the loop: TURN_MS).
   * Undefined: every item is handled to the end within its push (a virtual clock's replay).
   */
  readonly turnMs?: number;
}

/**
 * One item's rows handled across turns (`spreadRows`); lent rows stay valid under `loan`, held
 * while the item waits (a transient item is done in one pass).
 */
class RowJob {
  /** Rows handled so far. */
  done = 0;
  constructor(
    readonly loan: Loan | null,
    private readonly n: number,
    private readonly each: (i: number) => void,
    readonly finish: () => void,
  ) {}

  /** Handles rows until the turn is spent (looked at every ROWS_PER_LOOK rows); true once all are. */
  step(turn: Turn): boolean {
    const { n, each } = this;
    let i = this.done;
    if (turn.unbounded || n - i <= ROWS_PER_LOOK) {
      for (; i < n; i++) each(i);
    } else {
      while (i < n) {
        const stop = Math.min(n, i + ROWS_PER_LOOK);
        for (; i < stop; i++) each(i);
        if (turn.spent()) break;
      }
    }
    this.done = i;
    return i === n;
  }

  /** The budget of this job's next step: `ms` from now, or unbounded (`ms` undefined, or too few rows left to look at the clock). */
  turn(ms: number | undefined): Turn {
    return ms === undefined || this.n - this.done <= ROWS_PER_LOOK ? WHOLE : Turn.inLoop(ms);
  }
}

export abstract class Operator implements Consumer {
  readonly metrics: NodeMetrics;
  next: Consumer;
  protected readonly env: OpEnv;
  /** eKuiper's error prefix of this operator, e.g. `run Where error: `. */
  protected readonly errorPrefix: string;
  /** A sampled item is being processed (its downstream time is being summed). */
  private timing = false;
  private downstream = 0;
  /** The item being spread across turns, if any. */
  private spreading: RowJob | null = null;
  /** Items pushed while one is spread, in order. */
  private readonly waiting: Item[] = [];
  /** `complete` is running: spreads go to the end at once. */
  private completing = false;
  /** Told once items waiting behind a spread are fewer than WAITING_ITEMS again (`onRoom`). */
  private spreadWaiters: (() => void)[] = [];

  constructor(name: string, env: OpEnv, errorPrefix: string) {
    this.metrics = new NodeMetrics("op", name);
    this.env = env;
    this.errorPrefix = errorPrefix;
    this.next = DISCARD;
  }

  push(item: Item): void {
    if (this.spreading !== null) {
      this.hold(item);
      return;
    }
    // Errors from upstream pass through untouched and uncounted (sql §9.2).
    if (item instanceof RowError) {
      this.next.push(item);
      return;
    }
    if (item instanceof Watermark) {
      this.onWatermark(item);
      return;
    }
    const m = this.metrics;
    // process_latency_us is sampled: the first item and then one in 64 is timed, so the other 63
    // pay one mask test; the time spent downstream of this node (the chain is synchronous) is
    // subtracted from the sample.
    if ((++m.recordsIn & 63) === 1) {
      this.timed(item);
      return;
    }
    m.lastInvocation = this.env.now();
    try {
      this.process(item);
    } catch (e) {
      this.failOn(item, e);
    }
  }

  /** The per-item boundary: the item failed; its error is counted with a preview of the item. */
  private failOn(item: Item, e: unknown): void {
    this.fail(e instanceof RowError ? e : new RowError(failureText(e)));
    this.metrics.attachPayload(valuePreview(item));
  }

  /** `push` for a sampled item: process_latency_us = its time here minus its time downstream. */
  private timed(item: Item): void {
    const m = this.metrics;
    m.lastInvocation = this.env.now();
    this.downstream = 0;
    this.timing = true;
    const t0 = performance.now();
    try {
      this.process(item);
    } catch (e) {
      this.failOn(item, e);
    } finally {
      this.timing = false;
    }
    m.processLatencyUs = Math.round((performance.now() - t0 - this.downstream) * 1000);
  }

  /** An event-time watermark: passed on untouched and uncounted; windows consume it. */
  protected onWatermark(w: Watermark): void {
    this.next.push(w);
  }

  /**
   * Handles rows 0…n−1 of one item with `each`, then `finish`es it: within this turn's budget, or
   * to the end where the rule does not yield (no OpEnv.turnMs), while completing, or when the rows
   * are transient (`ownership`: the item's, see Ownership); what is left continues in later turns,
   * holding a loan meanwhile (the node's own state, such as its EvalCtx, stays as `process` set it:
   * no other item enters meanwhile). Called from `process`: a throw from `each` fails the item.
   */
  protected spreadRows(ownership: Ownership, n: number, each: (i: number) => void, finish: () => void): void {
    const job = new RowJob(ownership.kind === "loan" ? ownership : null, n, each, finish);
    const turnMs = this.env.turnMs;
    const whole = turnMs === undefined || this.completing || ownership.kind === "transient";
    if (job.step(job.turn(whole ? undefined : turnMs))) {
      job.finish();
      return;
    }
    this.spreading = job;
    if (job.loan !== null) job.loan.held++;
    setImmediate(resumeLater, this);
  }

  /**
   * An item is being spread across turns (the items pushed meanwhile wait behind it): the node's
   * state is then partly inside that item, so it is no state to snapshot.
   */
  get busy(): boolean {
    return this.spreading !== null;
  }

  /** Items that may still wait behind a spread before the rule should stop taking input (≤ 0: none). */
  room(): number {
    return WAITING_ITEMS - this.waiting.length;
  }

  /** Calls `fn` once there is room again (at once when there is); one call per waiter however often it asks. */
  onRoom(fn: () => void): void {
    if (this.room() > 0) fn();
    else if (!this.spreadWaiters.includes(fn)) this.spreadWaiters.push(fn);
  }

  /** An item waits behind the one being spread, holding its rows' loan meanwhile. */
  private hold(item: Item): void {
    if (item instanceof Collection && item.ownership.kind === "loan") item.ownership.held++;
    this.waiting.push(item);
  }

  /** A later turn: the spread item's next step; once it is done (or failed), the items that waited. */
  resume(): void {
    const job = this.spreading;
    if (job === null) return; // `complete` finished it
    try {
      const turnMs = this.env.turnMs; // undefined once the rule is traced
      if (!job.step(job.turn(this.completing ? undefined : turnMs))) {
        setImmediate(resumeLater, this);
        return;
      }
      this.unspread(job);
      job.finish();
    } catch (e) {
      this.unspread(job);
      this.fail(e instanceof RowError ? e : new RowError(failureText(e)));
    }
    const w = this.waiting;
    while (this.spreading === null && w.length > 0) {
      const item = w.shift()!;
      // The loan `hold` took, read before the push (a node may mark the item transient).
      const own = item instanceof Collection ? item.ownership : null;
      this.push(item);
      if (own !== null && own.kind === "loan") own.held--;
    }
    // Only here does `waiting` shrink: the drains stopped by it go on (another spread may have begun).
    if (this.spreadWaiters.length > 0 && this.room() > 0) {
      const fns = this.spreadWaiters;
      this.spreadWaiters = [];
      for (const fn of fns) fn();
    }
  }

  private unspread(job: RowJob): void {
    this.spreading = null;
    if (job.loan !== null) job.loan.held--;
  }

  /** Finishes now what the node spread across turns, pushing its results (at the end); the items that waited follow. */
  complete(): void {
    if (this.spreading === null) return;
    this.completing = true;
    try {
      this.resume();
    } finally {
      this.completing = false;
    }
  }

  /** Handles one item; calls `emit` for results. Throws RowError to fail the item. */
  protected abstract process(item: Item): void;

  protected emit(item: Item): void {
    this.metrics.recordsOut++;
    if (this.timing) {
      const t = performance.now();
      this.next.push(item);
      this.downstream += performance.now() - t;
    } else this.next.push(item);
  }

  /** Counts a failure; with sendError the (prefixed) error continues downstream. */
  protected fail(e: RowError, prefixed = false): void {
    const err = prefixed ? e : new RowError(this.errorPrefix + e.message);
    this.metrics.exception(err.message, this.env.now());
    this.env.onRowError?.(err.message);
    if (this.env.sendError) this.next.push(err);
  }

  /**
   * The node's state for a checkpoint (rules-and-sinks.md §5) as plain data, or undefined for a
   * stateless node. Called only between two batches, when the push chain is quiescent and no node
   * is `busy`.
   */
  snapshot(): unknown {
    return undefined;
  }

  /** Loads a `snapshot()` into the freshly built node, before any input. */
  restore(_s: unknown): void {}

  /**
   * The rule's topology is ending: release what the node holds on the clock (a window's timers).
   * A no-op for the nodes that hold nothing.
   */
  close(): void {}

  /** End of input: flush anything held (windows) and pass the end on. */
  end(): void {
    this.complete();
    const n = this.next as Partial<Operator>;
    n.end?.call(n);
  }
}

const DISCARD: Consumer = { push() {} };

/** A spread item's next step in a later turn (one function for every operator: none holds a closure of its own). */
function resumeLater(op: Operator): void {
  op.resume();
}
