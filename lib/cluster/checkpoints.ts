/**
 * Per-partition checkpoints of a group's rules in the JetStream KV bucket `floe_<group>_state`, so
 * the member that takes a partition over restores the state its previous owner saved (windows,
 * watermarks, analytic state and the source read position: runtime/checkpoint.ts's encoded
 * form). A checkpoint is stored as chunks under a fresh version, then a manifest
 * `m.<rule>.<p>` that names the version is written last: readers see the old checkpoint or the
 * new one whole, never a mix, and a value bigger than the server's payload limit still fits.
 */
import { EngineError, ErrCode } from "../errors.ts";
import type { KV } from "./nats.ts";
import { keyToken } from "./nats.ts";

export interface PartitionCheckpoint {
  /** The encoded state. */
  readonly state: string;
  /** The instance that saved it. */
  readonly owner: string;
  /** Save time (ms since the epoch, the saver's clock). */
  readonly ts: number;
  /** The owner's last checkpoint before it gave the partition up (a rebalance hand-over). */
  readonly released: boolean;
}

interface Manifest {
  readonly version: string;
  readonly chunks: number;
  readonly owner: string;
  readonly ts: number;
  readonly released?: boolean;
}

export class PartitionCheckpoints {
  private counter = 0;

  constructor(
    private readonly kv: KV,
    private readonly instance: string,
    /** Largest chunk in bytes (below the server's max_payload with room for headers). */
    private readonly chunkBytes: number,
  ) {}

  /** Stores `state` as the newest checkpoint of (`rule`, `partition`); replaces the previous one. `released`: the owner's last before giving the partition up. */
  async save(rule: string, partition: number, state: string, released = false): Promise<void> {
    const base = `${keyToken(rule)}.${partition}`;
    const old = await this.manifest(base);
    const version = `${this.instance}-${Date.now().toString(36)}-${(++this.counter).toString(36)}`;
    const bytes = new TextEncoder().encode(state);
    const chunks = Math.max(1, Math.ceil(bytes.length / this.chunkBytes));
    for (let i = 0; i < chunks; i++) await this.kv.put(`c.${base}.${version}.${i}`, bytes.subarray(i * this.chunkBytes, (i + 1) * this.chunkBytes));
    const m: Manifest = { version, chunks, owner: this.instance, ts: Date.now(), released };
    await this.kv.put(`m.${base}`, JSON.stringify(m));
    if (old) for (let i = 0; i < old.chunks; i++) await this.kv.purge(`c.${base}.${old.version}.${i}`);
  }

  /** The newest checkpoint of (`rule`, `partition`), or undefined. */
  async load(rule: string, partition: number, attempt = 0): Promise<PartitionCheckpoint | undefined> {
    const base = `${keyToken(rule)}.${partition}`;
    const m = await this.manifest(base);
    if (!m) return undefined;
    const parts: Uint8Array[] = [];
    for (let i = 0; i < m.chunks; i++) {
      const e = await this.kv.get(`c.${base}.${m.version}.${i}`);
      if (!e || e.operation !== "PUT") {
        // The owner replaced it meanwhile: read the new one (a few times; a chunk lost for good is an error).
        if (attempt < 3) return this.load(rule, partition, attempt + 1);
        throw new EngineError(`checkpoint of rule ${rule} partition ${partition}: chunk ${i} of version ${m.version} is missing`, ErrCode.io);
      }
      parts.push(e.value);
    }
    return { state: new TextDecoder().decode(Buffer.concat(parts)), owner: m.owner, ts: m.ts, released: m.released === true };
  }

  /** Partitions of `rule` that have a checkpoint, ascending. */
  async partitions(rule: string): Promise<number[]> {
    const out: number[] = [];
    for await (const k of await this.kv.keys(`m.${keyToken(rule)}.*`)) {
      const e = await this.kv.get(k);
      if (e && e.operation === "PUT") out.push(Number(k.slice(k.lastIndexOf(".") + 1)));
    }
    return out.sort((a, b) => a - b);
  }

  /** Deletes every checkpoint of `rule` (rule deletion). */
  async clear(rule: string): Promise<void> {
    const t = keyToken(rule);
    const keys: string[] = [];
    for await (const k of await this.kv.keys(`*.${t}.>`)) keys.push(k);
    for (const k of keys) await this.kv.purge(k);
  }

  private async manifest(base: string): Promise<Manifest | undefined> {
    const e = await this.kv.get(`m.${base}`);
    if (!e || e.operation !== "PUT") return undefined;
    return JSON.parse(new TextDecoder().decode(e.value)) as Manifest;
  }
}
