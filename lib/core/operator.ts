/**
 * The operator contract (STYLE: most.js-like `push`): every plan node is an Operator with the
 * same shape. Failures are caught once per item here, counted in the node's metrics, and
 * forwarded downstream as an error item when the rule has `sendError`. This is the rule's error
 * boundary: anything an item makes a node throw (a RowError, an engine bug, a stack overflow on
 * a deep value) fails that item only, with a message, and the rule goes on.
 */
import { failureText, RowError } from "../errors.ts";
import { Watermark, type Consumer, type Item } from "./item.ts";
import { NodeMetrics } from "./metrics.ts";

/** Shared per-rule runtime facts operators read (the clock's current time, options). */
export interface OpEnv {
  now(): number;
  readonly sendError: boolean;
  /** Told of every record failure after it is counted (pipe mode's stderr report); called only on errors. */
  readonly onRowError?: (message: string) => void;
  /**
   * The time (ms) a node may spend on one item in one event-loop turn before the rest of the item
   * waits for a later turn (a wall-clock run, where other rules and sources share the loop).
   * Undefined: every item is handled to the end within its push (a virtual clock's replay).
   */
  readonly turnMs?: number;
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

  constructor(name: string, env: OpEnv, errorPrefix: string) {
    this.metrics = new NodeMetrics("op", name);
    this.env = env;
    this.errorPrefix = errorPrefix;
    this.next = DISCARD;
  }

  push(item: Item): void {
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
      this.fail(e instanceof RowError ? e : new RowError(failureText(e)));
    }
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
      this.fail(e instanceof RowError ? e : new RowError(failureText(e)));
    } finally {
      this.timing = false;
    }
    m.processLatencyUs = Math.round((performance.now() - t0 - this.downstream) * 1000);
  }

  /** An event-time watermark: passed on untouched and uncounted; windows consume it. */
  protected onWatermark(w: Watermark): void {
    this.next.push(w);
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
   * stateless node. Called only between two batches, when the push chain is quiescent.
   */
  snapshot(): unknown {
    return undefined;
  }

  /** Loads a `snapshot()` into the freshly built node, before any input. */
  restore(_s: unknown): void {}

  /**
   * Finishes now what the node spread across turns (OpEnv.turnMs), pushing its results: before a
   * snapshot, so a checkpoint never falls inside an item. A no-op for the nodes that never wait.
   */
  complete(): void {}

  /**
   * The rule's topology is ending: release what the node holds on the clock (a window's timers).
   * A no-op for the nodes that hold nothing.
   */
  close(): void {}

  /** End of input: flush anything held (windows) and pass the end on. */
  end(): void {
    const n = this.next as Partial<Operator>;
    n.end?.call(n);
  }
}

const DISCARD: Consumer = { push() {} };
