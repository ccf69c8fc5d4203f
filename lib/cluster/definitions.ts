/**
 * Group-wide definitions in the JetStream KV bucket `floe_<group>`: key `d.<namespace>.<key>`
 * (key base64url), value `{v, o, s, p, h}` (envelope.ts) — the stored text (null once deleted: a
 * tombstone, so a delete names its origin too), the instance that wrote it, that instance's write
 * sequence, the revision of the key it replaces, and the HMAC of the rest under the group secret
 * (auth.ts). An entry that is not signed with the secret, that does not replace the key's previous
 * revision (a replayed old entry), whose key names no valid id, that was deleted or purged from
 * outside (a KV delete is never signed) or that the engine refuses (`GroupEntryRefused`,
 * server/group-entry.ts) is refused whole: logged, counted (refusals.ts), and nothing of it is applied.
 *
 * Every write is a compare-and-set on the key's newest revision known here; when another write got
 * in first, the writer reads the key's revision again and writes after it (the last write still
 * wins), at most `CAS_ATTEMPTS` times. The bucket keeps `DEFINITION_HISTORY` revisions per key, so
 * a member starting checks each key's newest entry against the one before it; a running member
 * checks each revision the watch delivers against the one it delivered before for the key.
 *
 * The bucket is the truth; every member keeps a local copy and converges on the last revision of
 * each key. Echo: a member's own write comes back through the watch; it is skipped when the local
 * copy already holds it, and an older own write or another member's write that precedes an own
 * write is skipped too (that later write wins everywhere, so applying the earlier one would only
 * flap the rule). Revisions already applied are never applied again.
 *
 * The watch does not deliver a revision the bucket no longer keeps (more than
 * `DEFINITION_HISTORY` writes of the key before the server sent it: a slow or reset watch), own
 * echoes included; the first revision after such a gap does not follow the one delivered before,
 * so it is refused like a replay, and the next one applies again. Whether an own write precedes a
 * foreign revision is therefore decided by the revision the server acknowledged for it (or its
 * echo, when one comes), never by waiting for the echo: a foreign revision that arrives while an
 * own write of the key is unanswered (or waits to be re-sent) is held back, and applied once every
 * own write of the key turned out to be older.
 */
import type { KV } from "./nats.ts";
import { fromKeyToken, keyToken } from "./nats.ts";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { idError } from "../store/ids.ts";
import type { EntrySigner } from "./auth.ts";
import { isRefused, openEnvelope, sealEnvelope } from "./envelope.ts";
import type { RefusalLog } from "./refusals.ts";
import type { DefinitionStore, Namespace } from "../store/definition-store.ts";
import { GROUP_NAMESPACES, ReplicatedStore } from "./replicated-store.ts";

/** One definition change from the group (`value` undefined: deleted). */
export interface DefinitionChange {
  readonly ns: Namespace;
  readonly key: string;
  readonly value: string | undefined;
}

/** Applies a change through the engine's own paths (server/cluster-apply.ts). */
export type ApplyChange = (c: DefinitionChange) => Promise<void> | void;

/** Revisions the definitions bucket keeps per key: the one before the newest is what a member starting checks the newest against. */
export const DEFINITION_HISTORY = 5;

/** Compare-and-set writes of one change before it counts as failed (and is re-sent later, as when NATS is away). */
const CAS_ATTEMPTS = 5;

/** A revision of a key as the bucket keeps it. */
interface Revision {
  readonly revision: number;
  readonly value: Uint8Array;
  readonly operation: string;
}

/** Thrown by an ApplyChange that refuses the entry (invalid as a REST call would be): counted as a refusal. */
export class GroupEntryRefused extends Error {}

/** Statically checks one change before it is stored locally (no engine needed: start-up); the reason or undefined. */
export type CheckChange = (c: DefinitionChange) => string | undefined;

/** A change to apply, with the own write sequence of its key when it was received. */
interface Delivery {
  readonly change: DefinitionChange;
  readonly bk: string;
  readonly ownSeq: number | undefined;
}

const SEEDED = "meta.seeded";

function bucketKey(ns: Namespace, key: string): string {
  return `d.${ns}.${keyToken(key)}`;
}

const CONF_KINDS = new Set(["sources", "sinks", "connections"]);

/** Why a decoded key names nothing REST could have stored (the ids REST accepts), or undefined. */
function keyError(ns: Namespace, key: string): string | undefined {
  if (ns !== "confKey") return idError(key);
  const [kind = "", type = "", ...rest] = key.split(".");
  if (!CONF_KINDS.has(kind) || !/^[A-Za-z0-9_-]+$/.test(type)) return `confKey ${JSON.stringify(key)} is not <sources|sinks|connections>.<type>.<id>`;
  return idError(rest.join("."));
}

function parseBucketKey(k: string): { ns: Namespace; key: string } | string {
  const m = /^d\.([A-Za-z]+)\.([A-Za-z0-9_-]+)$/.exec(k);
  if (!m || !GROUP_NAMESPACES.includes(m[1] as Namespace)) return "not a definition key";
  const key = fromKeyToken(m[2]!);
  const bad = keyError(m[1] as Namespace, key);
  return bad ?? { ns: m[1] as Namespace, key };
}

/** A compare-and-set that found another revision of the key than the one expected (JetStream's "wrong last sequence"). */
function isConflict(e: unknown): boolean {
  const code = e instanceof Error ? (e as Error & { code?: unknown }).code : undefined;
  return code === 10071 || code === 10164;
}

/**
 * The value of the newest entry of `chain` (oldest first) that a member could have applied: signed,
 * and replacing the revision before it (undefined: none is kept). The oldest one counts only when
 * the bucket dropped nothing before it (fewer revisions than `history` kept): otherwise what it
 * replaced is unknown, and a replayed create could pass for valid there.
 */
function lastValid(signer: EntrySigner, k: string, chain: readonly Revision[], history: number): string | null | undefined {
  for (let i = chain.length - 1; i >= (chain.length < history ? 0 : 1); i--) {
    const r = chain[i]!;
    const env = openEnvelope(signer, k, r.value, r.operation, i > 0 ? chain[i - 1]!.revision : 0);
    if (!isRefused(env)) return env.v;
  }
  return undefined;
}

export class DefinitionSync {
  private seq = 0;
  /** Bucket key → sequence of this instance's newest write of it. */
  private readonly own = new Map<string, number>();
  /** Bucket key → own writes sent and not yet answered by the server. */
  private readonly pending = new Map<string, number>();
  /** Bucket key → newest revision known to hold an own write (put acknowledgement or echo). */
  private readonly ownRev = new Map<string, number>();
  /** Bucket key → the newest foreign revision, held back while an own write may still land after it. */
  private readonly heldBack = new Map<string, { rev: number; change: DefinitionChange }>();
  /** Bucket key → newest revision seen of it, whatever it held (start-up and watch, in revision order): what the next entry must replace. */
  private readonly prev = new Map<string, number>();
  /** Bucket key → newest revision known of it (seen, or an own write's acknowledgement): what an own write replaces. */
  private readonly tip = new Map<string, number>();
  private apply: ApplyChange | undefined;
  private backlog: Delivery[] = [];
  private chain: Promise<void> = Promise.resolve();
  private watcher: { stop(): void } | undefined;
  /** Writes sent and not yet acknowledged by the server (`flush` waits for them). */
  private inflight = new Set<Promise<unknown>>();
  /** Changes applied from the group (tests and GET /cluster). */
  applied = 0;
  /** Definitions the start-up copied from the bucket into the local store, for the engine's full check (`takeSnapshot`). */
  private taken: DefinitionChange[] = [];
  /** The newest bucket revision the watch has delivered (definitions or not). */
  private seenRev = 0;
  private waiters: { rev: number; resolve: () => void }[] = [];
  /** Keys whose last write did not reach the bucket (NATS away): re-sent with the local value until stored. */
  private readonly unsent = new Map<string, { ns: Namespace; key: string }>();
  private retry: ReturnType<typeof setInterval> | undefined;
  private local: DefinitionStore | undefined;

  constructor(
    private readonly kv: KV,
    private readonly instance: string,
    private readonly signer: EntrySigner,
    private readonly refusals: RefusalLog,
    private readonly log: (line: string) => void,
    /** Whether NATS is reachable now: while it is not, REST calls neither wait for the group nor for their writes (re-sent later). */
    private readonly connected: () => boolean = () => true,
  ) {}

  /**
   * Start-up: brings `local` in line with the bucket (the first member of a new group seeds the
   * bucket with its local definitions instead), starts watching, and returns the store the
   * managers use. Changes arriving before `attach` wait in a backlog.
   */
  async open(local: DefinitionStore, check: CheckChange = () => undefined): Promise<ReplicatedStore> {
    const store = new ReplicatedStore(local, (ns, key, value) => this.publish(ns, key, value));
    this.local = local;
    const status = await this.kv.status();
    const last = status.streamInfo.state.last_seq;
    // Every revision the bucket keeps of every definition key, oldest first.
    const chains = new Map<string, Revision[]>();
    for await (const e of await this.kv.history({ key: "d.>" })) {
      const chain = chains.get(e.key);
      const r: Revision = { revision: e.revision, value: e.value, operation: e.operation };
      if (!chain) chains.set(e.key, [r]);
      else if (e.revision > chain[chain.length - 1]!.revision) chain.push(r);
    }
    const snapshot = new Map<string, { ns: Namespace; key: string; v: string | null }>();
    // Keys whose bucket entry is refused: the local copy stays as it is (an overwrite from outside deletes nothing).
    const refused = new Set<string>();
    // Keys whose newest entry is unsigned or out of place (an overwrite or a replay from outside)
    // but whose history still holds a valid one: that one is what running members kept (they
    // refused what came after it), so it is taken here too and stored again, signed, on top.
    const heal: { ns: Namespace; key: string; v: string | null; mine: boolean }[] = [];
    let older = 0;
    for (const [k, chain] of chains) {
      const e = chain[chain.length - 1]!;
      this.prev.set(k, e.revision);
      this.tip.set(k, e.revision);
      // A key deleted or purged from outside: not in the group, as the bucket's keys list it.
      if (e.operation !== "PUT") continue;
      const parsed = parseBucketKey(k);
      if (typeof parsed === "string") {
        this.refuse(k, parsed);
        refused.add(k);
        continue;
      }
      const env = openEnvelope(this.signer, k, e.value, e.operation, chain.length > 1 ? chain[chain.length - 2]!.revision : 0);
      let v: string | null | undefined;
      if (isRefused(env)) {
        this.refuse(k, env.why);
        if (env.older) older++;
        else v = lastValid(this.signer, k, chain, status.history);
      } else v = env.v;
      const why = v === undefined ? undefined : check({ ...parsed, value: v ?? undefined });
      if (v === undefined || why !== undefined) {
        if (why !== undefined) this.refuse(k, why);
        refused.add(k);
        continue;
      }
      if (isRefused(env)) heal.push({ ...parsed, v, mine: local.get(parsed.ns, parsed.key) === (v ?? undefined) });
      snapshot.set(k, { ...parsed, v });
    }
    if (older > 0)
      this.log(
        `cluster: the group's bucket ${status.bucket} holds ${older} definition(s) written by an older floe, signed without the revision they replace (so a replayed entry could not be told apart): ` +
          `none of them is applied, and this member keeps its own copies. Re-apply the definitions over REST on one member (each write stores them anew), ` +
          `or stop every member, delete the bucket (nats kv del ${status.bucket}) and start the members again: the first one seeds the group from its definitions`,
      );
    if (status.history < 2)
      this.log(
        `cluster: the group's bucket ${status.bucket} keeps ${status.history} revision per key (made by an older floe): a member starting cannot check an entry against the one it replaces and refuses every changed definition. ` +
          `Stop every member, delete the bucket (nats kv del ${status.bucket}) and start them again`,
      );
    let seeding = false;
    try {
      await this.kv.create(SEEDED, this.instance);
      seeding = true;
    } catch {
      // another member seeded the group: the bucket wins
    }
    store.quietly(() => {
      for (const s of snapshot.values()) {
        if (s.v === null) local.delete(s.ns, s.key);
        else if (local.get(s.ns, s.key) !== s.v) {
          local.set(s.ns, s.key, s.v);
          this.taken.push({ ns: s.ns, key: s.key, value: s.v });
        }
      }
      for (const ns of GROUP_NAMESPACES) {
        for (const [key, value] of local.entries(ns)) {
          if (snapshot.has(bucketKey(ns, key)) || refused.has(bucketKey(ns, key))) continue;
          if (seeding) this.publish(ns, key, value);
          else local.delete(ns, key);
        }
      }
    });
    for (const { ns, key, v, mine } of heal) {
      if (v === null) this.log(`cluster: stored the delete of ${ns} ${key} in the group again, signed`);
      else this.log(`cluster: stored ${ns} ${key} in the group again, signed, ${mine ? "from this member's copy" : "as its last valid entry held it"}`);
      this.publish(ns, key, v ?? undefined);
    }
    if (seeding) this.log(`cluster: seeded the group's definitions from this instance`);
    this.seenRev = last;
    // Every key, so that the newest revision seen can be compared with the bucket's (caughtUp).
    const w = await this.kv.watch({ key: ">", resumeFromRevision: last + 1 });
    this.watcher = w;
    void (async () => {
      for await (const e of w) {
        if (e.key.startsWith("d.")) this.receive(e.key, e.revision, e.value, e.operation);
        this.seen(e.revision);
      }
    })().catch((e) => this.log(`cluster: definition watch ended: ${errorText(e)}`));
    return store;
  }

  /** The definitions `open` took from the bucket (once): the engine checks them before it restores any (server/cluster-apply.ts). */
  takeSnapshot(): DefinitionChange[] {
    const out = this.taken;
    this.taken = [];
    return out;
  }

  /** Counts and logs `c` as refused (the engine's check of a definition `open` took). */
  refuseChange(c: DefinitionChange, reason: string): void {
    this.refuse(bucketKey(c.ns, c.key), reason);
  }

  /** Starts applying group changes (after the engine has restored its own). */
  attach(apply: ApplyChange): void {
    this.apply = apply;
    const backlog = this.backlog;
    this.backlog = [];
    for (const d of backlog) this.enqueue(d);
  }

  /** Resolves once every write sent so far is stored in the bucket. */
  async flush(): Promise<void> {
    if (!this.connected()) return;
    await Promise.allSettled([...this.inflight]);
  }

  /**
   * Resolves once every change stored in the bucket when called has been applied here (or after
   * `timeoutMs`, or at once when NATS cannot be asked): the REST handler waits for it, so a call
   * on any member sees what a call on another member wrote before it.
   */
  async caughtUp(timeoutMs = 2000): Promise<void> {
    if (!this.connected()) return;
    let last: number;
    try {
      last = (await this.kv.status()).streamInfo.state.last_seq;
    } catch {
      return;
    }
    if (this.seenRev < last) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.waiters.push({ rev: last, resolve })),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
      ]);
      clearTimeout(timer);
    }
    await this.chain;
  }

  private seen(rev: number): void {
    if (rev > this.seenRev) this.seenRev = rev;
    if (this.waiters.length === 0) return;
    const keep: { rev: number; resolve: () => void }[] = [];
    for (const w of this.waiters) (w.rev <= this.seenRev ? w.resolve() : keep.push(w));
    this.waiters = keep;
  }

  /** Resolves once every change received so far has been applied. */
  settled(): Promise<void> {
    return this.chain;
  }

  stop(): void {
    this.watcher?.stop();
    if (this.retry) clearInterval(this.retry);
    this.retry = undefined;
  }

  get isConnected(): boolean {
    return this.connected();
  }

  /** Writes not yet stored in the group (GET /cluster). */
  get unsentCount(): number {
    return this.unsent.size;
  }

  private publish(ns: Namespace, key: string, value: string | undefined): void {
    const bk = bucketKey(ns, key);
    const s = ++this.seq;
    this.own.set(bk, s);
    this.unsent.delete(bk);
    this.pending.set(bk, (this.pending.get(bk) ?? 0) + 1);
    const p = this.write(bk, value ?? null, s)
      .then(
        (rev) => {
          if (rev !== undefined) this.ownAt(bk, rev);
        },
        (e) => {
          // Kept and re-sent (with whatever the local copy holds then) until the bucket takes it.
          // It may have landed all the same (a timeout): the re-sent write lands later still.
          if (!this.unsent.has(bk) && this.own.get(bk) === s) this.log(`cluster: cannot publish ${ns} ${key} to the group (retrying): ${errorText(e)}`);
          if (this.own.get(bk) === s) this.unsent.set(bk, { ns, key });
          this.retry ??= setInterval(() => this.resend(), 1000);
        },
      )
      .finally(() => {
        const n = (this.pending.get(bk) ?? 1) - 1;
        if (n > 0) this.pending.set(bk, n);
        else this.pending.delete(bk);
        this.release(bk);
      });
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  /**
   * Stores own write `s` of `bk` after the key's newest revision known here (compare-and-set);
   * another write stored first → reads the key's revision again and writes after it. Resolves
   * with the revision stored, or undefined when a newer own write of the key made this one moot.
   */
  private async write(bk: string, v: string | null, s: number): Promise<number | undefined> {
    for (let attempt = 1; ; attempt++) {
      const p = this.tip.get(bk) ?? 0;
      try {
        return await this.kv.put(bk, sealEnvelope(this.signer, bk, { v, o: this.instance, s, p }), { previousSeq: p });
      } catch (e) {
        if (!isConflict(e)) throw e;
        if (attempt === CAS_ATTEMPTS) throw new EngineError(`the key changed in the bucket under each of ${CAS_ATTEMPTS} compare-and-set writes`, ErrCode.io, { cause: e });
      }
      // A newer own write carries a newer value: this one must not land after it.
      if (this.own.get(bk) !== s) return undefined;
      const now = (await this.kv.get(bk))?.revision ?? 0;
      if (this.own.get(bk) !== s) return undefined;
      this.tip.set(bk, now);
    }
  }

  private resend(): void {
    if (this.unsent.size === 0) {
      clearInterval(this.retry);
      this.retry = undefined;
      return;
    }
    const local = this.local;
    if (!local) return;
    for (const [bk, { ns, key }] of [...this.unsent]) {
      this.unsent.delete(bk);
      this.publish(ns, key, local.get(ns, key));
    }
  }

  /** Logs and counts an entry that is not applied. */
  private refuse(k: string, reason: string): void {
    this.refusals.refuse(k, reason);
  }

  private receive(k: string, revision: number, value: Uint8Array, operation: string): void {
    const prev = this.prev.get(k) ?? 0;
    if (revision <= prev) return;
    // Whatever it holds, it is what the key's next entry replaces.
    this.prev.set(k, revision);
    if (revision > (this.tip.get(k) ?? 0)) this.tip.set(k, revision);
    const parsed = parseBucketKey(k);
    if (typeof parsed === "string") return this.refuse(k, parsed);
    const env = openEnvelope(this.signer, k, value, operation, prev);
    if (isRefused(env)) return this.refuse(k, env.why);
    const change: DefinitionChange = { ...parsed, value: env.v ?? undefined };
    if (env.o === this.instance) {
      this.ownAt(k, revision);
      const mine = this.own.get(k);
      if (mine !== undefined && env.s < mine) return;
    } else {
      // An own write stored after it (acknowledged, its echo maybe never to come) wins.
      if ((this.ownRev.get(k) ?? 0) > revision) return;
      if (this.awaiting(k)) {
        this.heldBack.set(k, { rev: revision, change });
        return;
      }
    }
    this.deliver(change);
  }

  /** Whether an own write of `bk` may still land in the bucket later than what the watch delivered. */
  private awaiting(bk: string): boolean {
    return (this.pending.get(bk) ?? 0) > 0 || this.unsent.has(bk);
  }

  /** An own write of `bk` is stored at `rev`: a foreign revision held back before it is superseded. */
  private ownAt(bk: string, rev: number): void {
    if (rev > (this.ownRev.get(bk) ?? 0)) this.ownRev.set(bk, rev);
    if (rev > (this.tip.get(bk) ?? 0)) this.tip.set(bk, rev);
    const held = this.heldBack.get(bk);
    if (held && held.rev < rev) this.heldBack.delete(bk);
  }

  /** Once no own write of `bk` can land any more, a held-back foreign revision newer than all of them is the key's last: apply it. */
  private release(bk: string): void {
    const held = this.heldBack.get(bk);
    if (!held || this.awaiting(bk)) return;
    this.heldBack.delete(bk);
    if (held.rev > (this.ownRev.get(bk) ?? 0)) this.deliver(held.change);
  }

  private deliver(change: DefinitionChange): void {
    const bk = bucketKey(change.ns, change.key);
    const d: Delivery = { change, bk, ownSeq: this.own.get(bk) };
    if (this.apply) this.enqueue(d);
    else this.backlog.push(d);
  }

  /** Changes apply one at a time, in revision order (a rule after the stream it reads). */
  private enqueue({ change: c, bk, ownSeq }: Delivery): void {
    const apply = this.apply!;
    this.chain = this.chain.then(async () => {
      // An own write made since this revision was stored lands after it and wins: applying the
      // revision now would overwrite the newer local value with one the bucket no longer holds.
      if (this.own.get(bk) !== ownSeq) return;
      try {
        await apply(c);
        this.applied++;
      } catch (e) {
        if (e instanceof GroupEntryRefused) this.refuse(bk, e.message);
        else this.log(`cluster: cannot apply ${c.ns} ${c.key} from the group: ${errorText(e)}`);
      }
    });
  }
}
