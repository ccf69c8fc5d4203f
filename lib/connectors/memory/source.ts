/**
 * The memory source (rules-and-sinks.md §10.1): subscribes to topics of the in-process pub/sub
 * (wildcards allowed) and admits the rows memory sinks publish, with metadata `topic`.
 */
import { EngineError } from "../../errors.ts";
import type { MemoryPubSub, Rows } from "./pubsub.ts";
import { checkFilter } from "./pubsub.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { SourceMessage } from "../../source/message.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";

export class MemorySource implements SourceConnector {
  private readonly topic: string;
  private unsubscribe: (() => void) | undefined;

  constructor(
    props: Props,
    private readonly pubsub: MemoryPubSub,
  ) {
    this.topic = new PropReader(props).str("datasource");
    if (!this.topic) throw new EngineError("topic is required");
    checkFilter(this.topic);
  }

  open(ctx: SourceContext): void {
    const bus = ctx.bus;
    const one: SourceMessage[] = [new SourceMessage(null, null, null)];
    this.unsubscribe = this.pubsub.subscribe(
      this.topic,
      (topic: string, rows: Rows) => {
        one[0] = new SourceMessage(null, rows, { topic });
        return bus.publish(one);
      },
      (retry) => bus.onDrain(retry),
    );
    ctx.status.connected();
  }

  close(): void {
    this.unsubscribe?.();
  }
}
