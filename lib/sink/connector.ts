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
  constructor(
    payload: string | Uint8Array | Obj | Obj[],
    props: Record<string, unknown> | null,
    rows: number,
    source: SinkSource | null = null,
    traceparent: string | null = null,
    key = "",
  ) {
    this.payload = payload;
    this.props = props;
    this.rows = rows;
    this.source = source;
    this.traceparent = traceparent;
    this.key = key;
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
   * Items `send` took whose delivery the destination has not confirmed yet (a JetStream sink's
   * publishes awaiting their acknowledgement, or to be published again); absent: none outlive `send`.
   */
  unsettled?(): number;
  close(): Promise<void> | void;
}
