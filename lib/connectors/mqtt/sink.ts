/**
 * The MQTT sink (rules-and-sinks.md §9.2): publishes each payload to `topic` (a template allowed)
 * with `qos` and `retained`, v5 user `properties` (templates allowed). Publishing while
 * disconnected fails at once with `mqtt client is not connected` (an IO error, so the cache and
 * retry engage). QoS 0 frames without v5 properties are written by the sink itself, a turn's in
 * one write (publish-frames.ts); the rest goes through MQTT.js. QoS ≥ 1 publishes are pipelined
 * up to a window; MQTT.js resends unacknowledged ones after a reconnect. With `connectionSelector`
 * the sink publishes through that named connection (shared with other nodes), which outlives the
 * sink.
 */
import type { Writable } from "node:stream";
import type { IClientPublishOptions } from "mqtt";
import { EngineError, IoError } from "../../errors.ts";
import type { ConnectionRegistry } from "../connections.ts";
import { MqttConnection } from "./client.ts";
import type { SharedMqtt } from "./shared.ts";
import { parseMqttConf, type MqttConf } from "./conf.ts";
import { PublishFrames } from "./publish-frames.ts";
import { PropReader, type Props } from "../../config/props.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../../sink/connector.ts";

/** QoS ≥ 1 publishes in flight at once. */
const WINDOW = 64;

export class MqttSink implements SinkConnector {
  readonly bytes = true;
  private readonly conf: MqttConf;
  private readonly topic: string;
  private readonly qos: 0 | 1 | 2;
  private readonly retained: boolean;
  private readonly properties: Record<string, unknown> | undefined;
  private readonly selector: string;
  private conn: MqttConnection | undefined;
  private shared: { mqtt: SharedMqtt; ref: string } | undefined;
  private ctx: SinkContext | undefined;
  private inflight = 0;
  private slot: (() => void) | undefined;
  private idle: (() => void) | undefined;
  private readonly frames: PublishFrames;

  constructor(
    props: Props,
    private readonly connections?: ConnectionRegistry,
  ) {
    const r = new PropReader(props);
    this.topic = r.str("topic");
    if (!this.topic) throw new EngineError("mqtt sink is missing property topic");
    if (/[#+]/.test(this.topic)) throw new EngineError("mqtt sink topic shouldn't contain # or +");
    const q = r.raw("qos") ?? 0;
    if (q !== 0 && q !== 1 && q !== 2) throw new EngineError(`invalid qos value ${String(q)}, the value could be only int 0 or 1 or 2`);
    this.qos = q;
    this.retained = r.bool("retained");
    this.properties = r.obj("properties");
    this.selector = r.str("connectionSelector");
    this.conf = parseMqttConf(props);
    this.frames = new PublishFrames(this.conf.protocolVersion === 5);
  }

  open(ctx: SinkContext): Promise<void> {
    this.ctx = ctx;
    if (this.selector) {
      if (!this.connections) throw new EngineError(`connection ${this.selector} not existed`);
      const ref = `${ctx.ruleId}_${ctx.name}_0`;
      const mqtt = this.connections.acquireMqtt(this.selector, ref);
      this.shared = { mqtt, ref };
      this.conn = mqtt.conn;
      mqtt.status.link(ctx.status);
      return mqtt.conn.ready;
    }
    this.conn = new MqttConnection({ conf: this.conf, status: ctx.status, log: (l, level) => ctx.log(l, level) });
    return this.conn.ready;
  }

  send(item: SinkItem): Promise<void> | void {
    const conn = this.conn!;
    if (!conn.connected) throw new IoError("mqtt client is not connected");
    const p = item.props;
    const topic = typeof p?.topic === "string" ? p.topic : this.topic;
    const up = p && typeof p.properties === "object" && p.properties ? (p.properties as Record<string, unknown>) : this.properties;
    const tp = item.traceparent;
    const v5props = (up !== undefined || tp !== null) && this.conf.protocolVersion === 5;
    const client = conn.client;
    if (this.qos === 0 && !v5props && !client.disconnecting) {
      // The frame is written by the sink (publish-frames.ts), in one write with the turn's others.
      const s = client.stream as Writable;
      this.frames.add(s, topic, item.payload as string | Uint8Array, this.retained);
      // Real TCP backpressure: wait for the socket to drain rather than buffer without bound.
      if (s.writableNeedDrain) return new Promise((r) => s.once("drain", () => r()));
      return;
    }
    // What the sink gathered goes first: MQTT.js writes this one at once.
    this.frames.flush();
    const opts: IClientPublishOptions = { qos: this.qos, retain: this.retained };
    if (v5props) {
      const userProperties: Record<string, string> = {};
      if (up) for (const [k, v] of Object.entries(up)) userProperties[k] = String(v);
      // A traced rule's result continues its trace downstream (rules-and-sinks.md §9.2).
      if (tp !== null) userProperties.traceparent = tp;
      opts.properties = { userProperties };
    }
    const payload = typeof item.payload === "string" ? item.payload : Buffer.from(item.payload as Uint8Array);
    if (this.qos === 0) {
      client.publish(topic, payload, opts);
      const s = client.stream as Writable | undefined;
      // As above: the socket's back-pressure.
      if (s?.writableNeedDrain) return new Promise((r) => s.once("drain", () => r()));
      return;
    }
    this.inflight++;
    client.publish(topic, payload, opts, (e) => {
      this.inflight--;
      if (e) this.ctx!.status && this.ctx!.log(`publish to mqtt broker failed: ${e.message}`);
      const s = this.slot;
      this.slot = undefined;
      s?.();
      if (this.inflight === 0) this.idle?.();
    });
    if (this.inflight >= WINDOW) return new Promise((r) => (this.slot = r));
  }

  async close(): Promise<void> {
    this.frames.flush();
    if (this.inflight > 0 && this.conn?.connected) {
      await Promise.race([new Promise<void>((r) => (this.idle = r)), Bun.sleep(2000)]);
    }
    const sh = this.shared;
    if (sh) {
      this.shared = undefined;
      sh.mqtt.status.unlink(this.ctx!.status);
      await this.connections!.release(this.selector, sh.ref);
      return;
    }
    await this.conn?.close();
  }
}
