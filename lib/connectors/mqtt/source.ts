/**
 * The MQTT source (rules-and-sinks.md §9.1): subscribes to the stream's DATASOURCE topics (comma
 * separated, wildcards and `$share/…` allowed) and admits each read's publishes to the bus as one
 * batch; `eofMessage` ends the source. Metadata `topic`, `qos`, `messageId` (+ v5 `properties`).
 * With `connectionSelector` it attaches to that named connection (shared with other nodes) and
 * takes the publishes matching its topics; otherwise it has a connection of its own.
 */
import { EngineError } from "../../errors.ts";
import type { ConnectionRegistry } from "../connections.ts";
import type { Obj } from "../../value/values.ts";
import type { Bus } from "../../core/bus.ts";
import { parseMqttConf, type MqttConf } from "./conf.ts";
import { MqttConnection, type PublishHandler, type ReaderKind } from "./client.ts";
import type { Publish } from "./frames.ts";
import { TopicFilter, type RouteHandler, type SharedMqtt } from "./shared.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { MqttMeta, SourceMessage } from "../../source/message.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";

class MqttMeta5 extends MqttMeta {
  properties: Obj;
  constructor(p: Publish) {
    super(p.topic, p.qos, p.id);
    this.properties = p.userProps!;
    const tp = p.userProps!.traceparent;
    if (typeof tp === "string") this.traceId = tp.split("-")[1] ?? "";
  }
}

/**
 * A publish's metadata. Without a rule reading metadata a plain publish gets none; v5 user
 * properties are always kept (a traced rule reads its `traceparent` from them).
 */
function metaOf(p: Publish, wanted: boolean): MqttMeta | null {
  return p.userProps ? new MqttMeta5(p) : wanted ? new MqttMeta(p.topic, p.qos, p.id) : null;
}

export interface MqttSourceOptions {
  readonly base?: string;
  readonly reader?: ReaderKind;
  readonly defaultClientId?: string;
  /** Named connections (`connectionSelector`). */
  readonly connections?: ConnectionRegistry;
}

export class MqttSource implements SourceConnector {
  readonly conf: MqttConf;
  readonly topics: string[];
  readonly qos: 0 | 1 | 2;
  /** The named connection this source attaches to, or "" for a connection of its own. */
  readonly selector: string;
  private readonly eof: Uint8Array | undefined;
  private conn: MqttConnection | undefined;
  private closed = false;
  private unannounce: () => void = () => {};
  private shared: { mqtt: SharedMqtt; route: RouteHandler; ref: string; status: SourceContext["status"] } | undefined;

  constructor(
    props: Props,
    private readonly opts: MqttSourceOptions = {},
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
    this.selector = r.str("connectionSelector");
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
    // Builds the batch of `pubs[from..to)` (the ones `take` accepts) into scratch; true at the EOF message.
    const wantsMeta = ctx.wantsMeta;
    const collect = (pubs: readonly Publish[], from: number, to: number, take: ((topic: string) => boolean) | null): boolean => {
      scratch.length = 0;
      const meta = wantsMeta === undefined || wantsMeta();
      for (let i = from; i < to; i++) {
        const p = pubs[i]!;
        if (take !== null && !take(p.topic)) continue;
        if (eof && p.payload.length === eof.length && Buffer.compare(p.payload, eof) === 0) return true;
        scratch.push(new SourceMessage(p.payload, null, metaOf(p, meta)));
      }
      return false;
    };
    const end = (): void => {
      ended = true;
      ctx.eof();
    };
    if (this.selector) return this.openShared(ctx, bus, scratch, collect, end, () => ended);
    const handler: PublishHandler = {
      admit(pubs, from, to) {
        if (ended) return true;
        const atEof = collect(pubs, from, to, null);
        if (!bus.publish(scratch)) return false;
        if (atEof) end();
        return true;
      },
      onDrain: (fn) => bus.onDrain(fn),
      duplicates: (n) => ctx.duplicates(n),
      get maxBatch() {
        return bus.maxBatch;
      },
    };
    const conn = new MqttConnection({ conf: this.conf, handler, reader: this.opts.reader, status: ctx.status, log: (l, level) => ctx.log(l, level) });
    this.conn = conn;
    conn
      .subscribe(this.topics, this.qos)
      .then(() => this.announce(ctx, conn))
      .catch((e: Error) => ctx.exception(e.message));
    return Promise.resolve();
  }

  private openShared(
    ctx: SourceContext,
    bus: Bus<SourceMessage>,
    scratch: SourceMessage[],
    collect: (pubs: readonly Publish[], from: number, to: number, take: (topic: string) => boolean) => boolean,
    end: () => void,
    ended: () => boolean,
  ): Promise<void> {
    const reg = this.opts.connections;
    if (!reg) throw new EngineError(`connection ${this.selector} not existed`);
    const mqtt = reg.acquireMqtt(this.selector, ctx.ref);
    const filters = this.topics.map((t) => new TopicFilter(t));
    const matches = (topic: string): boolean => {
      for (let i = 0; i < filters.length; i++) if (filters[i]!.matches(topic)) return true;
      return false;
    };
    const route: RouteHandler = {
      matches,
      fits(pubs, from, to) {
        if (ended()) return true;
        let n = 0;
        for (let i = from; i < to; i++) if (matches(pubs[i]!.topic)) n++;
        return n === 0 || bus.reserve(n);
      },
      admit(pubs, from, to) {
        if (ended()) return;
        const atEof = collect(pubs, from, to, matches);
        // Cannot refuse: fits() reserved room for every matching publish.
        bus.publish(scratch);
        if (atEof) end();
      },
      onDrain: (fn) => bus.onDrain(fn),
      duplicates: (n) => ctx.duplicates(n),
      get maxBatch() {
        return bus.maxBatch;
      },
    };
    this.shared = { mqtt, route, ref: ctx.ref, status: ctx.status };
    mqtt.status.link(ctx.status);
    mqtt
      .subscribe(this.topics, this.qos, route)
      .then(() => this.announce(ctx, mqtt.conn))
      .catch((e: Error) => ctx.exception(e.message));
    return Promise.resolve();
  }

  /** Tells the context the source receives, now and after every reconnect (MQTT.js resubscribes). */
  private announce(ctx: SourceContext, conn: MqttConnection): void {
    if (!ctx.ready || this.closed) return;
    const v = this.conf.protocolVersion === 5 ? "5" : this.conf.protocolVersion === 4 ? "3.1.1" : "3.1";
    const where = `${this.conf.url} (MQTT ${v}), subscribed to ${this.topics.join(",")} at qos ${this.qos}`;
    ctx.ready(`connected to ${where}`);
    const again = () => ctx.ready!(`reconnected to ${where}`);
    conn.client.on("connect", again);
    this.unannounce = () => conn.client.off("connect", again);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unannounce();
    const sh = this.shared;
    if (sh) {
      this.shared = undefined;
      sh.mqtt.unsubscribe(this.topics, sh.route);
      sh.mqtt.status.unlink(sh.status);
      await this.opts.connections?.release(this.selector, sh.ref);
      return;
    }
    await this.conn?.close();
  }
}
