/**
 * The contract of a source connector: it opens, publishes SourceMessages in batches to the bus it
 * is given (stopping reading while the bus refuses), reports its connection state, and closes.
 */
import type { Bus } from "../../core/bus.ts";
import type { ConnectionReporter } from "../sinks/connector.ts";
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
  log(line: string): void;
  /** The source receives from now on: `text` says where from (`connected to …, subscribed to …`). */
  ready?(text: string): void;
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
}
