/**
 * The memory sink (rules-and-sinks.md §10.2): publishes rows to the in-process pub/sub so rules
 * chain. Waits while a subscriber's queue is full (backpressure across the chain).
 */
import { EngineError } from "../../errors.ts";
import { fmtV, isObj, type Obj } from "../../value/values.ts";
import type { MemoryPubSub, RowKind } from "./pubsub.ts";
import { PropReader, type Props } from "../../config/props.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../../sink/connector.ts";

const KINDS = new Set(["insert", "update", "delete", "upsert"]);

export class MemorySink implements SinkConnector {
  readonly bytes = false;
  private readonly topic: string;
  private readonly rowkindField: string;
  private readonly keyField: string;
  /** Passed with every publish so memory lookup tables can apply deletes (rules-and-sinks.md §10.3). */
  private readonly kind: RowKind | undefined;

  constructor(
    props: Props,
    private readonly pubsub: MemoryPubSub,
  ) {
    const r = new PropReader(props);
    this.topic = r.str("topic");
    if (!this.topic) throw new EngineError("topic is required");
    if (/[+#]/.test(this.topic)) throw new EngineError(`invalid memory topic ${this.topic}: wildcard found`);
    this.rowkindField = r.str("rowkindField");
    this.keyField = r.str("keyField");
    if (this.rowkindField && !this.keyField) throw new EngineError("keyField is required when rowkindField is set");
    this.kind = this.rowkindField ? { rowkindField: this.rowkindField, keyField: this.keyField } : undefined;
  }

  open(ctx: SinkContext): void {
    ctx.status.connected();
  }

  private check(row: Obj): void {
    if (!this.rowkindField) return;
    const k = row[this.rowkindField];
    if (k !== undefined && typeof k !== "string") throw new EngineError(`rowkind field ${this.rowkindField} is not a string in data ${fmtV(row)}`);
    if (k !== undefined && !KINDS.has(k)) throw new EngineError(`invalid rowkind ${k}`);
    if (row[this.keyField] === undefined) throw new EngineError(`key field ${this.keyField} not found in data ${fmtV(row)}`);
  }

  send(item: SinkItem): Promise<void> | void {
    const rows = item.payload as Obj | Obj[];
    if (Array.isArray(rows)) for (const r of rows) this.check(r);
    else if (isObj(rows)) this.check(rows);
    const topic = typeof item.props?.topic === "string" ? item.props.topic : this.topic;
    return this.pubsub.publish(topic, rows, this.kind);
  }

  close(): void {}
}
