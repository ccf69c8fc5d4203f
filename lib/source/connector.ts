/**
 * The contract of a source connector: it opens, publishes SourceMessages in batches to the bus it
 * is given (stopping reading while the bus refuses), reports its connection state, and closes.
 */
import type { Level } from "../log.ts";
import type { Bus } from "../core/bus.ts";
import type { ConnectionReporter } from "../core/connection.ts";
import type { SourceMessage } from "./message.ts";

export interface SourceContext {
  readonly bus: Bus<SourceMessage>;
  readonly status: ConnectionReporter;
  /** The node using the source, `<ruleId>_<stream>_0` (a named connection's reference). */
  readonly ref: string;
  /** A failure counted on the source node (the rule keeps running). */
  exception(message: string): void;
  /** The source cannot go on (its input failed): the rules reading it stop by error. */
  fail(e: unknown): void;
  /** Redelivered messages (MQTT DUP) were admitted. */
  duplicates(n: number): void;
  /** The source has no more data (`eofMessage`, end of stdin). */
  eof(message?: string): void;
  log(line: string, level?: Level): void;
  /** The source receives from now on: `text` says where from (`connected to …, subscribed to …`). */
  ready?(text: string): void;
  /**
   * Whether a rule reading the source reads its messages' metadata (`meta()`, `sendMetaToSink`, a
   * graph rule, pipe mode's error report); read per batch, it changes as rules attach. A source may
   * leave `SourceMessage.meta` null while it is false. Undefined: always read.
   */
  readonly wantsMeta?: () => boolean;
  /**
   * When a source that acknowledges late (JetStream) acknowledges: `take` once every rule reading
   * it has taken a message (`bus.backlog` falls), `checkpoint` at `checkpointed()` — the rule keeps
   * checkpoints of its state and is the source's only reader. Undefined counts as `take`.
   */
  readonly ackMode?: "take" | "checkpoint";
}

export interface SourceConnector {
  open(ctx: SourceContext): Promise<void> | void;
  close(): Promise<void> | void;
  /**
   * A rewindable source's read position (eKuiper's `$$offset`, rules-and-sinks.md §5) as plain
   * data, counting only what the rule consumed: `unconsumed` messages published to the bus have
   * not been processed yet.
   */
  offset?(unconsumed: number): unknown;
  /** Moves the read position to a saved `offset()` (before `open`, or while running: reset_state). */
  rewind?(state: unknown): void;
  /**
   * The checkpoint whose `offset()` was read last is stored: what it counted as consumed is
   * durable and may be acknowledged (ackMode `checkpoint`).
   */
  checkpointed?(): void;
  /**
   * The source acknowledges only what its rules took (or a stored checkpoint covers): the
   * acknowledgement ledger counts nothing it admitted as acknowledged before that.
   */
  readonly holdsAcks?: boolean;
}
