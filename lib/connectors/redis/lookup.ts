/**
 * The redis lookup (rules-and-sinks.md §11.9) on Bun's built-in RESP client. DATASOURCE is the db
 * number 0–15; exactly one lookup key, whose value is the redis key: `dataType` string → GET, the
 * value a JSON object (one row); list → LRANGE 0 -1, each element a JSON object. A missing key
 * yields no row.
 */
import type { RedisClient } from "bun";
import { openRedis } from "../../net/brokers.ts";
import { EngineError, IoError } from "../../errors.ts";
import { isObj, toStrConv, type Obj, type Value } from "../../value/values.ts";
import { decodeTupleJson } from "../../formats/json-tuple.ts";
import { PropReader, type Props } from "../../config/props.ts";
import type { LookupSource } from "../../lookup/table.ts";

export class RedisLookup implements LookupSource {
  private readonly url: string;
  private readonly list: boolean;
  private client: RedisClient | undefined;

  constructor(props: Props) {
    const r = new PropReader(props);
    const ds = r.str("datasource", "0") || "0";
    const db = /^\d+$/.test(ds) ? Number(ds) : NaN;
    if (!(db >= 0 && db <= 15)) throw new EngineError(`datasource ${ds} is invalid`);
    const dataType = r.str("dataType", "string") || "string";
    if (dataType !== "string" && dataType !== "list") throw new EngineError(`redis lookup only support string or list data type`);
    this.list = dataType === "list";
    const addr = r.str("addr", "127.0.0.1:6379") || "127.0.0.1:6379";
    const user = r.str("username");
    const pw = r.str("password");
    const auth = pw ? `${encodeURIComponent(user)}:${encodeURIComponent(pw)}@` : "";
    this.url = `redis://${auth}${addr}/${db}`;
  }

  async open(): Promise<void> {
    const client = openRedis(this.url, { autoReconnect: true, enableOfflineQueue: true });
    this.client = client;
    try {
      await client.connect();
    } catch (e) {
      throw new IoError(`redis lookup: ${(e as Error).message}`, { cause: e });
    }
  }

  async lookup(keys: readonly string[], values: readonly Value[]): Promise<Obj[]> {
    if (keys.length !== 1) throw new EngineError(`redis lookup only support one key, but got [${keys.join(" ")}]`);
    const client = this.client;
    if (!client) throw new IoError("redis lookup: not connected");
    const key = toStrConv(values[0]!);
    if (!this.list) {
      const s = await client.get(key);
      return s === null ? [] : [row(s)];
    }
    const items = (await client.send("LRANGE", [key, "0", "-1"])) as unknown;
    if (!Array.isArray(items)) return [];
    return items.map((s) => row(String(s)));
  }

  close(): void {
    this.client?.close();
    this.client = undefined;
  }
}

function row(text: string): Obj {
  let v: Value;
  try {
    v = decodeTupleJson(text);
  } catch (e) {
    throw new EngineError(`redis lookup: ${(e as Error).message}`, undefined, { cause: e });
  }
  if (!isObj(v)) throw new EngineError(`redis lookup: value ${text} is not a JSON object`);
  return v;
}
