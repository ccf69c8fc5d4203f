/**
 * What a source puts on the bus: raw payload bytes for byte sources (decoded by the rule's
 * decoder node) or already-decoded rows for tuple sources (memory, stdin), with metadata.
 */
import type { Obj, Value } from "../value/values.ts";

export class SourceMessage {
  /** Byte sources: the payload; null for tuple sources. */
  payload: Uint8Array | null;
  /** Tuple sources: one row or a list of rows; null for byte sources. */
  rows: Obj | Obj[] | null;
  meta: Obj | null;
  /** The W3C `traceparent` the message arrived with (an HTTP push's header), read only by a traced rule. */
  traceparent: string | null;
  /**
   * The payload decoded: the row (or rows, Decoder) and the decoder that made them. The rules of a
   * shared stream decode with one decoder, so the first decodes for all; the rows are never changed afterwards.
   */
  decoded: Obj | Obj[] | null;
  decodedBy: unknown;
  /** A shared stream's predicate-index classification (runtime/predicate-index.ts), read while it is admitted. */
  cuts: Int32Array | null;
  /**
   * What the rules sharing an evaluation made of it (runtime/shared-eval.ts), recorded by the
   * group `outcomeKey`'s leader (null: the group does not share it); the last group's only.
   */
  outcome: unknown;
  outcomeKey: string | null;
  constructor(payload: Uint8Array | null, rows: Obj | Obj[] | null, meta: Obj | null, traceparent: string | null = null) {
    this.payload = payload;
    this.rows = rows;
    this.meta = meta;
    this.traceparent = traceparent;
    this.decoded = null;
    this.decodedBy = null;
    this.cuts = null;
    this.outcome = null;
    this.outcomeKey = null;
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
