/**
 * One NATS connection (the official client, @nats-io/transport-node): connects in the
 * background and keeps reconnecting forever, reporting its state into a ConnectionReporter
 * (the nodes' `connection_status` metrics) and telling listeners after every reconnect (pull
 * consumers then re-issue their pull). A named connection (`connectionSelector`) is one
 * NatsLink shared by every node selecting it (lib/connectors/connections.ts); otherwise each source
 * and sink has its own.
 */
import { connectFailureLine } from "../../net/connect-failure.ts";
import type { Level } from "../../log.ts";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { errorText } from "../../errors.ts";
import { connectNats } from "../../net/nats.ts";
import { ConnectionReporter } from "../../core/connection.ts";
import type { NatsConf } from "./conf.ts";

export class NatsLink {
  readonly status: ConnectionReporter;
  /** Resolves with the client at the first successful connection; never rejects while open. */
  readonly ready: Promise<NatsConnection>;
  /** The client once connected (undefined before, and after close). */
  nc: NatsConnection | undefined;
  private closed = false;
  private readonly reconnects = new Set<() => void>();
  private js: JetStreamClient | undefined;
  private jsmP: Promise<JetStreamManager> | undefined;

  constructor(
    readonly conf: NatsConf,
    private readonly log: (line: string, level?: Level) => void,
    status?: ConnectionReporter,
  ) {
    this.status = status ?? new ConnectionReporter();
    this.status.connecting();
    this.ready = this.dial();
    // A rejected first attempt is reported through the status; callers await `ready` themselves.
    this.ready.catch(() => undefined);
  }

  /** Connected now (publishes would go out). */
  get connected(): boolean {
    const nc = this.nc;
    return nc !== undefined && !nc.isClosed() && this.status.status === 1;
  }

  private async dial(): Promise<NatsConnection> {
    let wait = 100;
    for (;;) {
      try {
        const nc = await connectNats(this.conf.options);
        if (this.closed) {
          await nc.close();
          throw new Error("nats connection closed");
        }
        this.nc = nc;
        this.status.connected();
        this.log(`nats ${this.conf.label}: connected`, "debug");
        void this.watch(nc);
        return nc;
      } catch (e) {
        if (this.closed) throw e;
        // Refused outright (authorization, bad TLS): retry with back-off like the MQTT connector.
        const text = `nats ${this.conf.label}: ${errorText(e)}`;
        // Logged when it changes, not at every retry.
        const changed = text !== this.status.lastMessage;
        this.status.disconnected(text);
        if (changed) this.log(connectFailureLine(this.conf.label, errorText(e), wait), "warn");
        await Bun.sleep(wait);
        if (this.closed) throw new Error("nats connection closed");
        wait = Math.min(wait * 2, 10_000);
        this.status.connecting();
      }
    }
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (this.closed) return;
      switch (s.type) {
        case "disconnect":
          this.status.disconnected(`nats ${s.server}: disconnected`);
          break;
        // "reconnecting" comes at every attempt: the state stays disconnected until one succeeds.
        case "reconnect":
          this.status.connected();
          this.log(`nats ${s.server}: reconnected`);
          for (const f of this.reconnects) f();
          break;
        case "error":
          this.log(`nats ${this.conf.label}: ${errorText(s.error)}`);
          break;
        default:
          break;
      }
    }
  }

  /** Calls `fn` after every reconnect; returns the unsubscribe. */
  onReconnect(fn: () => void): () => void {
    this.reconnects.add(fn);
    return () => this.reconnects.delete(fn);
  }

  /** The JetStream client (after `ready`). */
  async jetstream(): Promise<JetStreamClient> {
    const nc = await this.ready;
    return (this.js ??= jetstream(nc));
  }

  /** The JetStream manager (stream and consumer administration), after `ready`. */
  async manager(): Promise<JetStreamManager> {
    const nc = await this.ready;
    this.jsmP ??= jetstreamManager(nc, { checkAPI: false });
    return this.jsmP;
  }

  /** Flushes what was published, then closes (waits at most 2 s). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.reconnects.clear();
    const nc = this.nc;
    this.nc = undefined;
    if (!nc || nc.isClosed()) return;
    await Promise.race([nc.drain().catch(() => nc.close()), Bun.sleep(2000).then(() => nc.close())]).catch(() => undefined);
  }
}
