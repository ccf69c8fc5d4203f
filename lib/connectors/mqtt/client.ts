/**
 * One MQTT connection: MQTT.js does connect, subscribe, sessions, QoS handshakes, TLS, v5 and
 * keep-alive; reconnects back off from 100 ms to 10 s (rules-and-sinks.md §9). For a source, the
 * data path is the lean reader (lean-stream.ts, frames.ts) on the socket under MQTT.js: QoS 0/1
 * PUBLISH frames of one read are decoded in a batch and admitted to the bus, PUBACKs written once
 * per batch, reads coalesced and the socket paused while the bus pushes back. Every other frame
 * (and QoS 2 PUBLISH) goes to MQTT.js, whose `handleMessage` hook admits it through the same
 * handler. Reader "mqttjs" keeps MQTT.js on the whole path (ws/wss always do); behaviour is the
 * same either way.
 */
import type { Level } from "../../log.ts";
import { MqttClient, type IClientOptions, type IPublishPacket } from "mqtt";
import { connectMqtt } from "../../net/mqtt.ts";
import type { Obj } from "../../value/values.ts";
import { goNetErrorText } from "../../value/go-net-error.ts";
import { connectFailureLine } from "../../net/connect-failure.ts";
import { ConnectionReporter } from "../../core/connection.ts";
import type { MqttConf } from "./conf.ts";
import { Publish } from "./frames.ts";
import { LeanStream, type PublishHandler } from "./lean-stream.ts";

export type { PublishHandler } from "./lean-stream.ts";

export type ReaderKind = "lean" | "mqttjs";

/** The read path to use: FLOE_MQTT_READER=mqttjs|lean, default lean. */
export function defaultReader(env: Record<string, string | undefined> = process.env): ReaderKind {
  return env.FLOE_MQTT_READER === "mqttjs" ? "mqttjs" : "lean";
}

function userProps(packet: IPublishPacket): Obj | null {
  const up = packet.properties?.userProperties;
  if (!up) return null;
  const out: Obj = {};
  for (const [k, v] of Object.entries(up)) out[k] = Array.isArray(v) ? v[v.length - 1]! : v;
  return out;
}

/** paho.mqtt.golang's texts for the MQTT 3.1/3.1.1 CONNACK refusals (MQTT.js's `code` is the return code). */
const CONNACK: Record<number, string> = {
  1: "unacceptable protocol version",
  2: "identifier rejected",
  3: "server Unavailable",
  4: "bad user name or password",
  5: "not Authorized",
};

/**
 * A client error as eKuiper's MQTT client (paho) words it: a socket failure in Go's shape, prefixed
 * `network Error : ` while dialing; a v3 CONNACK refusal by its paho text; else the client's text.
 */
export function mqttErrorText(e: Error, conf: MqttConf, dialing: boolean): string {
  const net = goNetErrorText(e, conf);
  if (net) return dialing ? `network Error : ${net}` : net;
  const rc = (e as { code?: unknown }).code;
  if (conf.protocolVersion !== 5 && typeof rc === "number" && CONNACK[rc]) return CONNACK[rc];
  return e.message;
}

export interface MqttConnectionInit {
  readonly conf: MqttConf;
  /** Source connections: where publishes go. */
  readonly handler?: PublishHandler;
  readonly reader?: ReaderKind;
  /** Reporter of the node(s) using this connection. */
  readonly status?: ConnectionReporter;
  log(line: string, level?: Level): void;
}

export class MqttConnection {
  readonly client: MqttClient;
  readonly status: ConnectionReporter;
  /** Resolves at the first successful connection. */
  readonly ready: Promise<void>;
  /** Redelivered publishes (DUP flag) admitted. */
  duplicates = 0;
  private backoff = 100;
  /** The last client error, as eKuiper words it (mqttErrorText). */
  lastError = "";
  private closed = false;
  private readonly log: MqttConnectionInit["log"];
  private readonly url: string;

  constructor(init: MqttConnectionInit) {
    const { conf, handler } = init;
    this.log = (l, level) => init.log(l, level);
    this.url = conf.url;
    this.status = init.status ?? new ConnectionReporter();
    const lean = !!handler && !conf.ws && (init.reader ?? defaultReader()) === "lean";
    const url = new URL(conf.url);
    const options: IClientOptions = {
      ...conf.options,
      protocol: url.protocol.replace(":", "") as IClientOptions["protocol"],
      host: conf.host,
      hostname: conf.host,
      port: conf.port,
      path: conf.ws ? url.pathname : undefined,
      manualConnect: true,
    };
    if (lean) {
      this.client = new MqttClient(() => new LeanStream(conf, handler, this), options);
    } else {
      // MQTT.js builds the transport from the options; manualConnect lets us hook first.
      this.client = connectMqtt(options);
    }
    const client = this.client;
    if (handler) {
      client.handleMessage = (packet: IPublishPacket, cb: (e?: Error) => void) => {
        const p = new Publish(packet.topic, packet.payload as Uint8Array, packet.qos, packet.messageId ?? 0, !!packet.dup, !!packet.retain, userProps(packet));
        const one = [p];
        const tryAdmit = (): void => {
          if (this.closed) return;
          if (handler.admit(one, 0, 1)) {
            if (p.dup) {
              this.duplicates++;
              handler.duplicates?.(1);
            }
            // MQTT.js acknowledges on cb: after the rules' drains, queued by the admission.
            queueMicrotask(cb);
          } else handler.onDrain(tryAdmit);
        };
        tryAdmit();
      };
    }
    let first: () => void;
    this.ready = new Promise((r) => (first = r));
    client.on("connect", () => {
      init.log(`mqtt ${conf.url}: connected${this.lastError ? ` (after: ${this.lastError})` : ""}`, this.lastError ? "info" : "debug");
      this.backoff = 100;
      this.lastError = "";
      client.options.reconnectPeriod = 100;
      this.status.connected();
      first();
    });
    // Runs before MQTT.js's own close handler, which arms the reconnect timer with this period.
    client.prependListener("close", () => {
      if (this.closed) return;
      const retryMs = this.backoff;
      client.options.reconnectPeriod = retryMs;
      this.backoff = Math.min(this.backoff * 2, 10_000);
      // One line per failed attempt, with its reason and when the next one is due; the backoff
      // (100 ms doubling to 10 s) bounds the rate.
      const why = this.lastError || "connection closed";
      init.log(this.status.status === 1 ? `mqtt ${conf.url}: connection lost: ${why}; next retry in ${retryMs} ms` : connectFailureLine(conf.url, why, retryMs), "warn");
      // MQTT.js reconnects: the loss is recorded once and the state is connecting (0) again, as
      // eKuiper's client shows it while retrying; a failed attempt changes nothing (it is logged).
      if (this.status.status === 1) this.status.disconnected(this.lastError || "connection closed", true);
    });
    client.on("reconnect", () => this.status.connecting());
    client.on("error", (e) => {
      this.lastError = mqttErrorText(e, conf, !client.connected);
      // A failed attempt is logged when its socket closes (with the retry time); an error on a
      // live connection at once.
      if (client.connected) init.log(`mqtt ${conf.url}: ${this.lastError}`, "warn");
    });
    this.status.connecting();
    client.connect();
  }

  get connected(): boolean {
    return this.client.connected;
  }

  /** Subscribes once connected (MQTT.js resubscribes after reconnects). */
  async subscribe(topics: string[], qos: 0 | 1 | 2): Promise<void> {
    await this.ready;
    const granted = await this.client.subscribeAsync(topics, { qos });
    const bad = granted.filter((g) => g.qos === 128);
    if (bad.length) throw new Error(`subscribe to ${bad.map((g) => g.topic).join(",")} failed`);
    this.log(`mqtt ${this.url}: subscribed to ${topics.join(", ")} at qos ${qos}`, "debug");
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    // With manualConnect, MQTT.js clears its `disconnecting` flag once `end` has closed its stores;
    // a stream still connecting then closes afterwards and MQTT.js reconnects it — an orphan
    // connection per rule stopped before its client connected. No reconnects after close.
    client.options.reconnectPeriod = 0;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        client.end(true);
        resolve();
      }, 2000);
      client.end(!client.connected, {}, () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}
