/**
 * The contract between a sink pipeline and its connector. The pipeline transforms and encodes
 * results into SinkItems and queues them; its worker hands them to `send` one at a time, in
 * order. `send` returns nothing when done synchronously, or a promise; it throws IoError for a
 * connection-type failure (retried when retry is on) and any other error for a failure that
 * drops the item (rules-and-sinks.md §3.4).
 */
import type { Level } from "../../log.ts";
import type { Obj, Value } from "../../value/values.ts";
import type { NodeMetrics } from "../../core/metrics.ts";

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

/**
 * Connection state changes, reported into a node's connection metrics (rest-api.md §6.2). A
 * shared (named) connection links the reporters of the nodes using it: they follow its state
 * while attached. A node attached or linked later takes the state as it is, with the real times
 * of the last connection, disconnection and try.
 */
export class ConnectionReporter {
  private readonly nodes: NodeMetrics[] = [];
  private readonly links: ConnectionReporter[] = [];
  status: -1 | 0 | 1 = 0;
  connectedAt = 0;
  disconnectedAt = 0;
  triedAt = 0;
  /** The message of the last disconnection. */
  lastMessage = "";

  attach(m: NodeMetrics): void {
    this.nodes.push(m);
    this.write(m);
  }

  detach(m: NodeMetrics): void {
    const i = this.nodes.indexOf(m);
    if (i >= 0) this.nodes.splice(i, 1);
  }

  /** `r` follows this reporter from now on, starting from the current state. */
  link(r: ConnectionReporter): void {
    this.links.push(r);
    r.follow(this, false);
  }

  unlink(r: ConnectionReporter): void {
    const i = this.links.indexOf(r);
    if (i >= 0) this.links.splice(i, 1);
  }

  connecting(): void {
    this.status = 0;
    this.triedAt = Date.now();
    this.publish(false);
  }

  connected(): void {
    this.status = 1;
    this.connectedAt = this.triedAt = Date.now();
    this.publish(false);
  }

  /**
   * The connection is gone; a lost connection counts one exception on the node (rules-and-sinks.md
   * §9). `retrying`: the client reconnects by itself, so the state is 0 (connecting), as eKuiper
   * shows it while it retries; otherwise −1 (disconnected).
   */
  disconnected(message: string, retrying = false): void {
    const lost = this.status === 1;
    this.status = retrying ? 0 : -1;
    this.disconnectedAt = Date.now();
    this.lastMessage = message;
    this.publish(lost);
  }

  private write(m: NodeMetrics): void {
    m.connectionStatus = this.status;
    m.lastConnectedTime = this.connectedAt;
    m.lastDisconnectedTime = this.disconnectedAt;
    m.lastDisconnectedMessage = this.lastMessage;
    m.lastTryTime = this.triedAt;
  }

  private follow(from: ConnectionReporter, lost: boolean): void {
    this.status = from.status;
    this.connectedAt = from.connectedAt;
    this.disconnectedAt = from.disconnectedAt;
    this.triedAt = from.triedAt;
    this.lastMessage = from.lastMessage;
    this.publish(lost);
  }

  private publish(lost: boolean): void {
    for (const m of this.nodes) {
      this.write(m);
      if (lost) m.exception(this.lastMessage, this.disconnectedAt);
    }
    for (const l of this.links) l.follow(this, lost);
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
  close(): Promise<void> | void;
}
