/**
 * The redisSub source (rules-and-sinks.md §11.9): subscribes to `channels` on the Redis server at
 * `address` (`db`, `username`, `password`) with Bun's RESP client; each published message is one
 * payload for the decoder. Pub/sub cannot be paused: messages wait in a `bufferLength` queue while
 * the bus refuses, and one arriving at a full queue is dropped and counted.
 */
import type { RedisClient } from "bun";
import { openRedis } from "../../net/brokers.ts";
import { EngineError } from "../../errors.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { SourceMessage } from "../../source/message.ts";
import { DEFAULT_PUSH_BUFFER, PushQueue } from "../../source/push-queue.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";
import { connectFailureLine } from "../../net/connect-failure.ts";

const enc = new TextEncoder();

/** `redis://[user:pass@]host:port/db` of the redisSub/redisPub props. */
export function redisUrl(address: string, db: number, username: string, password: string): string {
  const auth = password || username ? `${encodeURIComponent(username)}:${encodeURIComponent(password)}@` : "";
  return `redis://${auth}${address}/${db}`;
}

export class RedisSubSource implements SourceConnector {
  readonly url: string;
  /** host:port, for log lines (the url may carry a password). */
  private readonly address: string;
  readonly channels: string[];
  private readonly bufferLength: number;
  private client: RedisClient | undefined;
  private queue: PushQueue | undefined;
  private closed = false;

  constructor(props: Props) {
    const r = new PropReader(props);
    const db = r.int("db", 0);
    if (db < 0 || db > 15) throw new EngineError(`redisSub db should be in range 0-15`);
    this.address = r.str("address", "127.0.0.1:6379") || "127.0.0.1:6379";
    this.url = redisUrl(this.address, db, r.str("username"), r.str("password"));
    this.channels = (r.strList("channels") ?? []).filter((c) => c);
    if (this.channels.length === 0) throw new EngineError("redisSub source is missing property channels");
    const n = r.int("bufferLength", DEFAULT_PUSH_BUFFER);
    this.bufferLength = n >= 1 ? n : DEFAULT_PUSH_BUFFER;
  }

  open(ctx: SourceContext): void {
    const queue = (this.queue = new PushQueue(ctx.bus, this.bufferLength));
    const listener = (message: string, channel: string): void => {
      if (!queue.offer(new SourceMessage(enc.encode(message), null, { channel }))) ctx.exception(`redisSub source drop message from channel ${channel}: buffer full`);
    };
    ctx.status.connecting();
    void this.connect(ctx, listener, 100);
  }

  /**
   * Connects and subscribes, retrying with backoff until closed. Bun's client does not restore
   * subscriptions after its own reconnect (and a second subscribe doubles the listener), so a
   * lost connection is replaced by a fresh client.
   */
  private async connect(ctx: SourceContext, listener: (message: string, channel: string) => void, backoff: number): Promise<void> {
    while (!this.closed) {
      const client = openRedis(this.url, { autoReconnect: false, enableOfflineQueue: false });
      this.client = client;
      try {
        await client.connect();
        await client.subscribe(this.channels, listener);
        if (this.closed) return client.close();
        ctx.status.connected();
        client.onclose = (e?: Error) => {
          if (this.closed || this.client !== client) return;
          ctx.status.disconnected(e?.message ?? "connection closed");
          void this.connect(ctx, listener, 100);
        };
        return;
      } catch (e) {
        client.close();
        if (this.closed) return;
        const text = (e as Error).message;
        // Logged when it changes, not at every retry.
        if (text !== ctx.status.lastMessage) ctx.log(connectFailureLine(`redis://${this.address}`, text, backoff), "warn");
        ctx.status.disconnected(text);
        await Bun.sleep(backoff);
        backoff = Math.min(backoff * 2, 10_000);
      }
    }
  }

  close(): void {
    this.closed = true;
    this.queue?.close();
    this.client?.close();
  }
}
