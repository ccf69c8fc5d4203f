/**
 * The MQTT source (rules-and-sinks.md §9.1): subscribes to the stream's DATASOURCE topics (comma
 * separated, wildcards and `$share/…` allowed) and admits each read's publishes to the bus as one
 * batch; `eofMessage` ends the source. Metadata `topic`, `qos`, `messageId` (+ v5 `properties`).
 */
import { EngineError } from "../../errors.ts";
import type { Obj } from "../../expr/values.ts";
import type { Bus } from "../../runtime/bus.ts";
import { parseMqttConf, type MqttConf } from "../mqtt/conf.ts";
import { MqttConnection, type PublishHandler, type ReaderKind } from "../mqtt/client.ts";
import type { Publish } from "../mqtt/frames.ts";
import { PropReader, type Props } from "../props.ts";
import { MqttMeta, SourceMessage } from "./message.ts";
import type { SourceConnector, SourceContext } from "./source.ts";

class MqttMeta5 extends MqttMeta {
  properties: Obj;
  constructor(p: Publish) {
    super(p.topic, p.qos, p.id);
    this.properties = p.userProps!;
    const tp = p.userProps!.traceparent;
    if (typeof tp === "string") this.traceId = tp.split("-")[1] ?? "";
  }
}

function metaOf(p: Publish): MqttMeta {
  return p.userProps ? new MqttMeta5(p) : new MqttMeta(p.topic, p.qos, p.id);
}

export class MqttSource implements SourceConnector {
  readonly conf: MqttConf;
  readonly topics: string[];
  readonly qos: 0 | 1 | 2;
  private readonly eof: Uint8Array | undefined;
  private conn: MqttConnection | undefined;

  constructor(
    props: Props,
    private readonly opts: { base?: string; reader?: ReaderKind; defaultClientId?: string } = {},
  ) {
    const r = new PropReader(props);
    const ds = r.str("datasource");
    this.topics = ds
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t);
    if (this.topics.length === 0) throw new EngineError("topic is required");
    const q = r.int("qos", 0);
    if (q !== 0 && q !== 1 && q !== 2) throw new EngineError(`invalid qos value ${q}, the value could be only int 0 or 1 or 2`);
    this.qos = q;
    const eof = r.str("eofMessage");
    this.eof = eof ? new Uint8Array(Buffer.from(eof, "base64")) : undefined;
    this.conf = parseMqttConf(props, opts);
  }

  /** Redelivered messages (DUP flag) admitted so far. */
  get duplicates(): number {
    return this.conn?.duplicates ?? 0;
  }

  open(ctx: SourceContext): Promise<void> {
    const bus: Bus<SourceMessage> = ctx.bus;
    const eof = this.eof;
    const scratch: SourceMessage[] = [];
    let ended = false;
    const handler: PublishHandler = {
      admit(pubs, from, to) {
        if (ended) return true;
        scratch.length = 0;
        for (let i = from; i < to; i++) {
          const p = pubs[i]!;
          if (eof && p.payload.length === eof.length && Buffer.compare(p.payload, eof) === 0) {
            if (!bus.publish(scratch)) return false;
            ended = true;
            ctx.eof();
            return true;
          }
          scratch.push(new SourceMessage(p.payload, null, metaOf(p)));
        }
        return bus.publish(scratch);
      },
      onDrain: (fn) => bus.onDrain(fn),
      duplicates: (n) => ctx.duplicates(n),
      get maxBatch() {
        return bus.maxBatch;
      },
    };
    this.conn = new MqttConnection({ conf: this.conf, handler, reader: this.opts.reader, status: ctx.status, log: (l) => ctx.log(l) });
    this.conn.subscribe(this.topics, this.qos).catch((e: Error) => ctx.exception(e.message));
    return Promise.resolve();
  }

  async close(): Promise<void> {
    await this.conn?.close();
  }
}
