/**
 * The redis sink (rules-and-sinks.md §11.9) on Bun's built-in RESP client: rows stored as JSON
 * under `key` or the value of `field` (keyType single), or one key per field (multiple); SET
 * (with `expiration`) or LPUSH; `rowkindField` delete → DEL / LPOP. A tuple sink.
 */
import type { RedisClient } from "bun";
import { openRedis } from "../../net/brokers.ts";
import { EngineError, IoError } from "../../errors.ts";
import { fmtV, isObj, toStrConv, type Obj } from "../../value/values.ts";
import { encodeGoJson } from "../../value/json-encode.ts";
import { PropReader, type Props } from "../../config/props.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../../sink/connector.ts";

interface RedisConf {
  addr: string;
  username: string;
  password: string;
  db: number;
  key: string;
  field: string;
  keyType: "single" | "multiple";
  dataType: "string" | "list";
  /** seconds; -1 keeps the TTL */
  expiration: number;
  rowkindField: string;
}

function parse(props: Props): RedisConf {
  const r = new PropReader(props);
  const db = r.int("db", 0);
  if (db < 0 || db > 15) throw new EngineError("redisSink db should be in range 0-15");
  const keyType = (r.str("keyType", "single") || "single") as RedisConf["keyType"];
  const dataType = (r.str("dataType", "string") || "string") as RedisConf["dataType"];
  if (dataType !== "string" && dataType !== "list") throw new EngineError("redis sink only support string or list data type");
  const key = r.str("key");
  const field = r.str("field");
  if (keyType === "single" && !key && !field) throw new EngineError("redis sink must have key or field when KeyType is single");
  const exp = r.raw("expiration");
  const expiration = exp === undefined || exp === null ? -1 : typeof exp === "number" ? exp / 1000 : r.duration("expiration") / 1000;
  return {
    addr: r.str("addr", "127.0.0.1:6379") || "127.0.0.1:6379",
    username: r.str("username"),
    password: r.str("password"),
    db,
    key,
    field,
    keyType,
    dataType,
    expiration,
    rowkindField: r.str("rowkindField"),
  };
}

export class RedisSink implements SinkConnector {
  readonly bytes = false;
  private readonly c: RedisConf;
  private client: RedisClient | undefined;

  constructor(props: Props) {
    this.c = parse(props);
  }

  async open(ctx: SinkContext): Promise<void> {
    const c = this.c;
    const auth = c.password ? `${encodeURIComponent(c.username)}:${encodeURIComponent(c.password)}@` : "";
    const client = openRedis(`redis://${auth}${c.addr}/${c.db}`, { autoReconnect: true, enableOfflineQueue: false });
    client.onconnect = () => ctx.status.connected();
    client.onclose = (e?: Error) => ctx.status.disconnected(e?.message ?? "connection closed");
    this.client = client;
    ctx.status.connecting();
    // Retried forever with backoff, like every connector (the worker waits for the first connect).
    for (let backoff = 100; ; backoff = Math.min(backoff * 2, 10_000)) {
      try {
        await client.connect();
        return;
      } catch {
        await Bun.sleep(backoff);
      }
    }
  }

  private async cmd(name: string, args: string[]): Promise<void> {
    try {
      await this.client!.send(name, args);
    } catch (e) {
      const msg = (e as Error).message;
      if (!this.client!.connected || /connect|closed|ECONN/i.test(msg)) throw new IoError(`redis sink: ${msg}`, { cause: e });
      throw new EngineError(`redis sink: ${msg}`);
    }
  }

  private async row(row: Obj): Promise<void> {
    const c = this.c;
    const kind = c.rowkindField ? row[c.rowkindField] : undefined;
    const del = kind === "delete";
    if (c.keyType === "multiple") {
      for (const [k, v] of Object.entries(row)) {
        if (k === c.rowkindField) continue;
        await this.write(k, toStrConv(v), del);
      }
      return;
    }
    let key = c.key;
    if (c.field) {
      const v = row[c.field];
      if (v === undefined || v === null) throw new EngineError(`field ${c.field} not found in data ${fmtV(row)}`);
      key = toStrConv(v);
    }
    await this.write(key, encodeGoJson(row), del);
  }

  private async write(key: string, value: string, del: boolean): Promise<void> {
    const c = this.c;
    if (c.dataType === "list") return this.cmd(del ? "LPOP" : "LPUSH", del ? [key] : [key, value]);
    if (del) return this.cmd("DEL", [key]);
    if (c.expiration > 0) return this.cmd("SET", [key, value, "PX", String(Math.round(c.expiration * 1000))]);
    return this.cmd("SET", [key, value, "KEEPTTL"]);
  }

  async send(item: SinkItem): Promise<void> {
    if (!this.client?.connected) throw new IoError("redis sink: not connected");
    const p = item.payload;
    if (Array.isArray(p)) for (const r of p) await this.row(r);
    else if (isObj(p as Obj)) await this.row(p as Obj);
  }

  close(): void {
    this.client?.close();
  }
}
