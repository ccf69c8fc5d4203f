/**
 * The redisPub sink (rules-and-sinks.md §11.9): publishes each payload to `channel` (a template
 * allowed) on the Redis server at `address` (`db`, `username`, `password`) with Bun's RESP client.
 */
import type { RedisClient } from "bun";
import { openRedis } from "../../net/brokers.ts";
import { EngineError, IoError } from "../../errors.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { redisUrl } from "./source.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../../sink/connector.ts";

const dec = new TextDecoder();

export class RedisPubSink implements SinkConnector {
  readonly bytes = true;
  readonly url: string;
  readonly channel: string;
  private client: RedisClient | undefined;
  private closed = false;

  constructor(props: Props) {
    const r = new PropReader(props);
    this.channel = r.str("channel");
    if (!this.channel) throw new EngineError("redisPub sink is missing property channel");
    const db = r.int("db", 0);
    if (db < 0 || db > 15) throw new EngineError("redisPub db should be in range 0-15");
    this.url = redisUrl(r.str("address", "127.0.0.1:6379") || "127.0.0.1:6379", db, r.str("username"), r.str("password"));
  }

  async open(ctx: SinkContext): Promise<void> {
    const client = openRedis(this.url, { autoReconnect: true, enableOfflineQueue: false });
    client.onconnect = () => ctx.status.connected();
    client.onclose = (e?: Error) => {
      if (!this.closed) ctx.status.disconnected(e?.message ?? "connection closed");
    };
    this.client = client;
    ctx.status.connecting();
    // Retried with backoff until connected or closed (the worker waits for the first connect).
    for (let backoff = 100; !this.closed; backoff = Math.min(backoff * 2, 10_000)) {
      try {
        await client.connect();
        return;
      } catch {
        await Bun.sleep(backoff);
      }
    }
  }

  async send(item: SinkItem): Promise<void> {
    const client = this.client;
    if (!client?.connected) throw new IoError("redisPub sink: not connected");
    const p = item.payload;
    const channel = typeof item.props?.channel === "string" ? item.props.channel : this.channel;
    try {
      await client.publish(channel, typeof p === "string" ? p : dec.decode(p as Uint8Array));
    } catch (e) {
      throw new IoError(`redisPub sink: ${(e as Error).message}`, { cause: e });
    }
  }

  close(): void {
    this.closed = true;
    this.client?.close();
  }
}
