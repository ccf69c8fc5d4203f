/**
 * What a source puts on the bus: raw payload bytes for byte sources (decoded by the rule's
 * decoder node) or already-decoded rows for tuple sources (memory, stdin), with metadata.
 */
import type { Obj, Value } from "../value/values.ts";

/**
 * One per message read, so every field is bytes on every message's way in: what only a shared
 * stream needs per message is here only if it must outlive the admission (a predicate index's
 * classification lives beside the batch, runtime/sources.ts).
 */
export class SourceMessage {
  /** Byte sources: the payload; null for tuple sources. */
  payload: Uint8Array | null;
  /** Tuple sources: one row or a list of rows; null for byte sources. */
  rows: Obj | Obj[] | null;
  meta: Obj | null;
  /** The W3C `traceparent` the message arrived with (an HTTP push's header), read only by a traced rule. */
  traceparent: string | null;
  /**
   * The payload decoded: the row (or rows, Decoder). A message is on one bus, and the rules of a
   * bus decode with one decoder (a shared stream's), so the first decodes for all; the rows are
   * never changed afterwards.
   */
  decoded: Obj | Obj[] | null;
  /**
   * What the rules sharing an evaluation made of it (runtime/shared-eval.ts: its Outcome, which
   * names the group), recorded by the group's leader (null: no group shares it); the last group's only.
   */
  outcome: unknown;
  constructor(payload: Uint8Array | null, rows: Obj | Obj[] | null, meta: Obj | null, traceparent: string | null = null) {
    this.payload = payload;
    this.rows = rows;
    this.meta = meta;
    this.traceparent = traceparent;
    this.decoded = null;
    this.outcome = null;
  }
}

/**
 * MQTT metadata (rules-and-sinks.md §9.1): `topic`, `qos`, `messageId`. `meta(messageid)` also
 * works through a prototype getter that `meta(*)` and JSON do not show.
 */
export class MqttMeta {
  [key: string]: Value;
  topic: string;
  qos: bigint;
  messageId: bigint;
  constructor(topic: string, qos: number, messageId: number) {
    this.topic = topic;
    // QoS 0 publishes (the common case) carry id 0: no conversion per message for either.
    this.qos = qos === 0 ? 0n : qos === 1 ? 1n : BigInt(qos);
    this.messageId = messageId === 0 ? 0n : BigInt(messageId);
  }
  get messageid(): bigint {
    return this.messageId;
  }
}
