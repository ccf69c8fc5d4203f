/**
 * Per-partition checkpoints of a group's rules in the JetStream KV bucket `floe_<group>_state`, so
 * the member that takes a partition over restores the state its previous owner saved (windows,
 * watermarks, analytic state and the source read position: runtime/checkpoint.ts's encoded
 * form). A checkpoint is stored as chunks under a fresh version, then a manifest
 * `m.<rule>.<p>` that names the version is written last: readers see the old checkpoint or the
 * new one whole, never a mix, and a value bigger than the server's payload limit still fits. A
 * manifest that stores the state its predecessor names (a claim of the checkpoint read) names the
 * same chunks; chunks no manifest names any more are purged by the write that replaced them.
 *
 * The manifest is also the partition's ownership, fenced by compare-and-set on its KV revision.
 * A member claims a partition by writing the manifest with the next epoch, conditional on the
 * revision its decision to claim was based on (`read`, then `claim` with that read's basis): the
 * state it starts from and whether it had to wait for a live owner's release came from that
 * revision, so a manifest written after it — another member's claim, an upload — fails the claim
 * instead of being overwritten unseen. Every later write of its ownership (`save`) is conditional on the
 * revision of its own last write. A write of an older epoch — an owner paused past its lease
 * whose successor claimed meanwhile — therefore fails on the server, is counted as refused, and
 * the stale owner learns that it lost the partition (`FencedError`). A watch tells the holder of
 * a partition at once when another member claims it (its `Held` turns invalid), before its next write.
 * Manifests carry the group secret's HMAC and the state's SHA-256: one that does not verify is
 * refused (counted) and the partition starts without it.
 */
import { createHash } from "node:crypto";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import type { EntrySigner } from "./auth.ts";
import { KvWatchInclude, type KvEntry } from "@nats-io/kv";
import type { KV } from "./nats.ts";
import { keyToken } from "./nats.ts";
import type { RefusalLog } from "./refusals.ts";

export interface PartitionCheckpoint {
  /** The encoded state. */
  readonly state: string;
  /** The instance that saved it. */
  readonly owner: string;
  /** Save time (ms since the epoch, the saver's clock). */
  readonly ts: number;
  /** The owner's last checkpoint before it gave the partition up (a rebalance hand-over). */
  readonly released: boolean;
  /** The ownership it was saved under (1 = the partition's first claim). */
  readonly epoch: number;
}

/**
 * The manifest a decision to claim was based on: its KV revision (0: no manifest was ever
 * written) and epoch (0: none; a manifest that does not verify still orders the next epoch).
 */
export interface ClaimBasis {
  readonly rev: number;
  readonly epoch: number;
  /** The chunks of the checkpoint read (absent: none, or one that does not verify). */
  readonly stored?: Stored;
}

/** A checkpoint's chunks in the bucket, as a manifest names them. */
export interface Stored {
  readonly version: string;
  readonly chunks: number;
  /** SHA-256 (base64url) of the state. */
  readonly sha: string;
}

/** What `read` found: the basis of a claim, and the checkpoint (undefined: none, or one that does not verify). */
export interface ReadCheckpoint {
  readonly basis: ClaimBasis;
  readonly checkpoint: PartitionCheckpoint | undefined;
}

interface Manifest {
  readonly version: string;
  readonly chunks: number;
  readonly owner: string;
  readonly ts: number;
  readonly released: boolean;
  readonly epoch: number;
  /** SHA-256 (base64url) of the state. */
  readonly sha: string;
}

/** A write of this member's ownership refused: another member claimed the partition with a newer epoch. */
export class FencedError extends EngineError {
  constructor(message: string) {
    super(message, ErrCode.io);
  }
}

/** An ownership this member claimed: its epoch, the manifest revision and chunks of its last write, and whether it still holds (false once superseded). */
export interface Held {
  readonly epoch: number;
  rev: number;
  stored: Stored | undefined;
  valid: boolean;
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("base64url");

export class PartitionCheckpoints {
  private counter = 0;
  private readonly held = new Map<string, Held>();
  /** The newest manifest entry the watch brought, by key: a take-over's read starts from it without a round trip. */
  private readonly manifests = new Map<string, KvEntry>();
  private watcher: { stop(): void } | undefined;
  /** Writes of this member refused because a newer owner had claimed (GET /cluster, /metrics). */
  fencedWrites = 0;

  constructor(
    private readonly kv: KV,
    private readonly instance: string,
    /** Largest chunk in bytes (below the server's max_payload with room for headers). */
    private readonly chunkBytes: number,
    private readonly signer: EntrySigner,
    private readonly refusals: RefusalLog,
    private readonly log: (line: string) => void,
  ) {}

  /** The manifest key base of (`rule`, `partition`). */
  static base(rule: string, partition: number): string {
    return `${keyToken(rule)}.${partition}`;
  }

  /** Watches the manifests, so that a holder learns of a newer claim before its next write. */
  async watch(): Promise<void> {
    const w = await this.kv.watch({ key: "m.>", include: KvWatchInclude.UpdatesOnly });
    this.watcher = w;
    void (async () => {
      for await (const e of w) {
        if (e.revision > (this.manifests.get(e.key)?.revision ?? 0)) this.manifests.set(e.key, e);
        const base = e.key.slice(2);
        const h = this.held.get(base);
        if (!h || e.operation !== "PUT" || e.revision <= h.rev) continue;
        const m = this.verified(e.key, e.value);
        // Only a signed claim counts: a forged manifest cannot take a partition away.
        if (m && (m.epoch > h.epoch || (m.epoch === h.epoch && m.owner !== this.instance))) this.supersede(base, `${m.owner} claimed it with epoch ${m.epoch}`);
      }
    })().catch((e) => this.log(`cluster: checkpoint watch ended: ${errorText(e)}`));
  }

  stop(): void {
    this.watcher?.stop();
  }

  /**
   * Claims (`rule`, `partition`) with the epoch after `basis`'s, storing `state` (the state its
   * run starts from, read with `basis`) as the claim's checkpoint; returns the ownership (`valid`
   * turns false once another member claims). The write is conditional on `basis.rev`: it fails
   * with FencedError when anything wrote the manifest since the caller's `read` — not only
   * between a read of its own and its write, which would let a member claim over a claim (or an
   * upload) it never saw, from a state and a decision made before it. A claim of the state read
   * (a take-over's) writes the manifest only, naming the chunks already there: on a busy member
   * each write to the bucket is a round trip the take-over waits for.
   */
  async claim(rule: string, partition: number, state: string, basis: ClaimBasis): Promise<Held> {
    const base = PartitionCheckpoints.base(rule, partition);
    const epoch = basis.epoch + 1;
    const held: Held = { epoch, rev: basis.rev, stored: basis.stored, valid: true };
    this.held.set(base, held);
    try {
      await this.write(base, state, false, epoch, basis.rev === 0 ? undefined : basis.rev, basis.stored);
    } catch (e) {
      this.supersede(base, undefined);
      throw e;
    }
    return held;
  }

  /** Stores `state` as the newest checkpoint of the ownership held; `released`: its last before giving the partition up. FencedError when it is not held any more. */
  async save(rule: string, partition: number, state: string, released = false): Promise<void> {
    const base = PartitionCheckpoints.base(rule, partition);
    const h = this.held.get(base);
    if (!h) throw new FencedError(`checkpoint of rule ${rule} partition ${partition}: this member does not hold the partition`);
    await this.write(base, state, released, h.epoch, h.rev, h.stored);
    if (released) this.supersede(base, undefined);
  }

  /**
   * Chunks, then the manifest — created when `expectRev` is undefined, else conditional on that
   * revision; `prev`: the chunks the manifest names now (purged once it names others, reused when
   * they hold `state`).
   */
  private async write(base: string, state: string, released: boolean, epoch: number, expectRev: number | undefined, prev: Stored | undefined): Promise<void> {
    const bytes = new TextEncoder().encode(state);
    const digest = sha(bytes);
    const reused = prev !== undefined && prev.sha === digest;
    const { version, chunks } = reused ? prev : { version: `${this.instance}-${Date.now().toString(36)}-${(++this.counter).toString(36)}`, chunks: Math.max(1, Math.ceil(bytes.length / this.chunkBytes)) };
    if (!reused) for (let i = 0; i < chunks; i++) await this.kv.put(`c.${base}.${version}.${i}`, bytes.subarray(i * this.chunkBytes, (i + 1) * this.chunkBytes));
    const m: Manifest = { version, chunks, owner: this.instance, ts: Date.now(), released, epoch, sha: digest };
    const body = JSON.stringify(m);
    const value = JSON.stringify({ ...m, h: this.signer.sign(`m.${base}`, body) });
    let rev: number;
    try {
      rev = expectRev === undefined ? await this.kv.create(`m.${base}`, value) : await this.kv.update(`m.${base}`, value, expectRev);
    } catch (e) {
      // Chunks of this write only: reused ones are the manifest's that stays.
      if (!reused) for (let i = 0; i < chunks; i++) await this.kv.purge(`c.${base}.${version}.${i}`).catch(() => undefined);
      const now = await this.manifestAt(base);
      // Only a failed compare-and-set is a fence; anything else (NATS away) is an ordinary write error.
      if (!now || now.rev === expectRev) throw e;
      this.fencedWrites++;
      this.refusals.refuse(`m.${base}`, `a write of epoch ${epoch} by ${this.instance}: ${now.m ? `${now.m.owner} holds epoch ${now.m.epoch}` : "the manifest changed"}`);
      this.supersede(base, now.m ? `${now.m.owner} holds epoch ${now.m.epoch}` : "the manifest changed");
      throw new FencedError(`partition ${base.slice(base.lastIndexOf(".") + 1)}: a newer owner claimed it; this member's write of epoch ${epoch} was refused`);
    }
    const h = this.held.get(base);
    if (h && h.epoch === epoch) {
      h.rev = rev;
      h.stored = { version, chunks, sha: digest };
    }
    if (prev && !reused) for (let i = 0; i < prev.chunks; i++) await this.kv.purge(`c.${base}.${prev.version}.${i}`);
  }

  /** The ownership of `base` ends here (`why`: another member claimed it; undefined: released or never won). */
  private supersede(base: string, why: string | undefined): void {
    const h = this.held.get(base);
    if (!h) return;
    this.held.delete(base);
    h.valid = false;
    if (why) this.log(`cluster: partition ${base} is no longer this member's: ${why}`);
  }

  /** The newest checkpoint of (`rule`, `partition`), or undefined (none, or one that does not verify). */
  async load(rule: string, partition: number): Promise<PartitionCheckpoint | undefined> {
    return (await this.readFrom(rule, partition, false)).checkpoint;
  }

  /**
   * The newest checkpoint of (`rule`, `partition`) with the basis of a claim made from it. The
   * manifest is the one the watch brought last when there is one: on a busy member each request
   * is a round trip a take-over waits for. Should the watch lag behind the server, the claim on
   * that basis fails (it is conditional on the revision) and the caller reads again.
   */
  read(rule: string, partition: number): Promise<ReadCheckpoint> {
    return this.readFrom(rule, partition, true);
  }

  /** `read`, with the manifest the watch brought (`watched`) or the server's. */
  private async readFrom(rule: string, partition: number, watched: boolean, attempt = 0): Promise<ReadCheckpoint> {
    const base = PartitionCheckpoints.base(rule, partition);
    const e = (watched ? this.manifests.get(`m.${base}`) : undefined) ?? (await this.kv.get(`m.${base}`));
    if (!e) return { basis: { rev: 0, epoch: 0 }, checkpoint: undefined };
    if (e.operation !== "PUT") return { basis: { rev: e.revision, epoch: 0 }, checkpoint: undefined };
    const basis = { rev: e.revision, epoch: this.decode(e.value)?.epoch ?? 0 };
    const m = this.verified(e.key, e.value);
    if (!m) return { basis, checkpoint: undefined };
    const parts: Uint8Array[] = [];
    for (let i = 0; i < m.chunks; i++) {
      const c = await this.kv.get(`c.${base}.${m.version}.${i}`);
      if (!c || c.operation !== "PUT") {
        // The owner replaced it meanwhile: read the new one (a few times; a chunk lost for good is an error).
        // Read again, from the server: the watch may not have brought the newer manifest yet.
        if (attempt < 3) return this.readFrom(rule, partition, false, attempt + 1);
        throw new EngineError(`checkpoint of rule ${rule} partition ${partition}: chunk ${i} of version ${m.version} is missing`, ErrCode.io);
      }
      parts.push(c.value);
    }
    const bytes = Buffer.concat(parts);
    if (sha(bytes) !== m.sha) {
      this.refusals.refuse(`m.${base}`, "the checkpoint's chunks do not match its manifest's digest");
      return { basis, checkpoint: undefined };
    }
    return { basis: { ...basis, stored: { version: m.version, chunks: m.chunks, sha: m.sha } }, checkpoint: { state: new TextDecoder().decode(bytes), owner: m.owner, ts: m.ts, released: m.released, epoch: m.epoch } };
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

  /** The manifest of `base` with its revision (`m` undefined: present but refused). */
  private async manifestAt(base: string): Promise<{ rev: number; m: Manifest | undefined } | undefined> {
    const e = await this.kv.get(`m.${base}`);
    if (!e || e.operation !== "PUT") return undefined;
    return { rev: e.revision, m: this.verified(e.key, e.value) };
  }

  /** A manifest's fields, whether or not it verifies (its epoch still orders the next claim). */
  private decode(value: Uint8Array): Manifest | undefined {
    try {
      const o = JSON.parse(new TextDecoder().decode(value)) as Record<string, unknown>;
      if (typeof o.version !== "string" || typeof o.chunks !== "number" || typeof o.owner !== "string" || typeof o.epoch !== "number" || typeof o.sha !== "string") return undefined;
      return { version: o.version, chunks: o.chunks, owner: o.owner, ts: Number(o.ts ?? 0), released: o.released === true, epoch: o.epoch, sha: o.sha };
    } catch {
      return undefined;
    }
  }

  /** The manifest when it carries the group secret's HMAC; a refusal (counted) otherwise. */
  private verified(key: string, value: Uint8Array): Manifest | undefined {
    const m = this.decode(value);
    let h: unknown;
    try {
      h = (JSON.parse(new TextDecoder().decode(value)) as { h?: unknown }).h;
    } catch {
      // decode already failed
    }
    if (m && this.signer.verify(key, JSON.stringify(m), h)) return m;
    this.refusals.refuse(key, m ? "no valid signature of the group secret" : "not a checkpoint manifest");
    return undefined;
  }
}
