/**
 * The contract between a sink pipeline and its connector. The pipeline transforms and encodes
 * results into SinkItems and queues them; its worker hands them to `send` one at a time, in
 * order. `send` returns nothing when done synchronously, or a promise; it throws IoError for a
 * connection-type failure (retried when retry is on) and any other error for a failure that
 * drops the item (rules-and-sinks.md §3.4).
 */
import type { Level } from "../log.ts";
import type { Obj, Value } from "../value/values.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import type { ConnectionReporter } from "../core/connection.ts";

/** What a payload was encoded from: the transform's outputs (one, or a batch). */
export class SinkSource {
  /** `[data, template text or null]` per output. */
  outs: [Value, string | null][];
  batched: boolean;
  constructor(outs: [Value, string | null][], batched: boolean) {
    this.outs = outs;
    this.batched = batched;
  }
}

/** One payload for the connector. */
export class SinkItem {
  /** Bytes sinks: the encoded payload. Tuple sinks: a row or a list of rows. */
  payload: string | Uint8Array | Obj | Obj[];
  /** The action's properties with templated values rendered for this item, or null (static). */
  props: Record<string, unknown> | null;
  /** Rows carried (for messages_processed_total). */
  rows: number;
  /** Kept only when a resend re-encodes the item (`resendIndicatorField`), else null. */
  source: SinkSource | null;
  /** The trace context of the result (a traced rule, rest-api.md §15), or null. */
  traceparent: string | null;
  /**
   * The item's emission key for a `keyed` connector, else "": `<sink>:<epoch>-<n>`, the
   * pipeline's count of the items it made, checkpointed with the rule (SinkPipeline.snapshot) —
   * unique per item, the same for an item replayed from a checkpoint.
   */
  key: string;
  /**
   * The number of the first result (in the pipeline's count of the results it was given) whose
   * outputs this item carries; 0 for an item of an earlier run (restored from the cache). Never
   * decreases from one item to the next: the sink's checkpoint barrier (SinkPipeline.safe) reads it.
   */
  tag: number;
  constructor(
    payload: string | Uint8Array | Obj | Obj[],
    props: Record<string, unknown> | null,
    rows: number,
    source: SinkSource | null = null,
    traceparent: string | null = null,
    key = "",
    tag = 0,
  ) {
    this.payload = payload;
    this.props = props;
    this.rows = rows;
    this.source = source;
    this.traceparent = traceparent;
    this.key = key;
    this.tag = tag;
  }
}

export interface SinkContext {
  readonly ruleId: string;
  /** Sink node name, e.g. `mqtt_0`. */
  readonly name: string;
  readonly status: ConnectionReporter;
  /** The sink node's metrics, for what only the connector can tell (the stream's duplicates). */
  readonly metrics: NodeMetrics;
  /** Info-level log line (the log sink writes here). */
  log(line: string, level?: Level): void;
}

export interface SinkConnector {
  /** Bytes sinks get encoded payloads; tuple sinks (memory, redis) get rows. */
  readonly bytes: boolean;
  /**
   * `send` always completes synchronously and keeps no reference to the item (file, log, nop):
   * while its queue is empty the pipeline sends each result at once, in one reused item.
   */
  readonly direct?: boolean;
  /** The connector reads `SinkItem.key` (the JetStream sink's message id): the pipeline keys each item. */
  readonly keyed?: boolean;
  /** Starts connecting; resolves at the first successful connection (the worker waits for it). */
  open(ctx: SinkContext): Promise<void> | void;
  send(item: SinkItem): Promise<void> | void;
  /**
   * How many of the sends that completed (returned or resolved without an error), counted in the
   * order they were made, the destination has confirmed — only a contiguous prefix of them: a
   * confirmation that arrives before an earlier one's does not count yet. A send whose item is
   * dropped after it completed (the destination refused it) counts as confirmed, as does a failed
   * send that is not retried. Absent: an item is delivered when `send` completes (fire-and-forget
   * writes). A JetStream sink's count stays behind while publishes await their acknowledgement.
   */
  confirmed?(): number;
  close(): Promise<void> | void;
}
