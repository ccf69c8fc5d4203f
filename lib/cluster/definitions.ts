/**
 * Group-wide definitions in the JetStream KV bucket `floe_<group>`: key `d.<namespace>.<key>`
 * (key base64url), value `{v, o, s}` — the stored text (null once deleted: a tombstone, so a
 * delete names its origin too), the instance that wrote it and that instance's write sequence.
 *
 * The bucket is the truth; every member keeps a local copy and converges on the last revision of
 * each key. Echo: a member's own write comes back through the watch; it is skipped when the local
 * copy already holds it, and an older own write or another member's write that precedes an own
 * write still in flight is skipped too (that later write wins everywhere, so applying the earlier
 * one would only flap the rule). Revisions already applied are never applied again.
 */
import type { KV } from "./nats.ts";
import { fromKeyToken, keyToken } from "./nats.ts";
import { errorText } from "../errors.ts";
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

interface Envelope {
  readonly v: string | null;
  readonly o: string;
  readonly s: number;
}

const SEEDED = "meta.seeded";

function bucketKey(ns: Namespace, key: string): string {
  return `d.${ns}.${keyToken(key)}`;
}

function parseBucketKey(k: string): { ns: Namespace; key: string } | undefined {
  const m = /^d\.([A-Za-z]+)\.([A-Za-z0-9_-]+)$/.exec(k);
  if (!m || !GROUP_NAMESPACES.includes(m[1] as Namespace)) return undefined;
  return { ns: m[1] as Namespace, key: fromKeyToken(m[2]!) };
}

function decode(value: Uint8Array, operation: string): Envelope {
  if (operation !== "PUT") return { v: null, o: "", s: 0 };
  try {
    const e = JSON.parse(new TextDecoder().decode(value)) as Envelope;
    return { v: typeof e.v === "string" ? e.v : null, o: String(e.o ?? ""), s: Number(e.s ?? 0) };
  } catch {
    return { v: null, o: "", s: 0 };
  }
}

export class DefinitionSync {
  private seq = 0;
  /** Bucket key → sequence of this instance's newest write of it. */
  private readonly own = new Map<string, number>();
  /** Bucket key → sequence of this instance's newest write the watch has delivered. */
  private readonly seenOwn = new Map<string, number>();
  /** Bucket key → newest revision handled. */
  private readonly revs = new Map<string, number>();
  private apply: ApplyChange | undefined;
  private backlog: DefinitionChange[] = [];
  private chain: Promise<void> = Promise.resolve();
  private watcher: { stop(): void } | undefined;
  /** Writes sent and not yet acknowledged by the server (`flush` waits for them). */
  private inflight = new Set<Promise<unknown>>();
  /** Changes applied from the group (tests and GET /cluster). */
  applied = 0;
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
    private readonly log: (line: string) => void,
    /** Whether NATS is reachable now: while it is not, REST calls neither wait for the group nor for their writes (re-sent later). */
    private readonly connected: () => boolean = () => true,
  ) {}

  /**
   * Start-up: brings `local` in line with the bucket (the first member of a new group seeds the
   * bucket with its local definitions instead), starts watching, and returns the store the
   * managers use. Changes arriving before `attach` wait in a backlog.
   */
  async open(local: DefinitionStore): Promise<ReplicatedStore> {
    const store = new ReplicatedStore(local, (ns, key, value) => this.publish(ns, key, value));
    this.local = local;
    const last = (await this.kv.status()).streamInfo.state.last_seq;
    const snapshot = new Map<string, { ns: Namespace; key: string; env: Envelope; rev: number }>();
    for await (const k of await this.kv.keys("d.>")) {
      const parsed = parseBucketKey(k);
      if (!parsed) continue;
      const e = await this.kv.get(k);
      if (!e) continue;
      snapshot.set(k, { ...parsed, env: decode(e.value, e.operation), rev: e.revision });
    }
    let seeding = false;
    try {
      await this.kv.create(SEEDED, this.instance);
      seeding = true;
    } catch {
      // another member seeded the group: the bucket wins
    }
    store.quietly(() => {
      for (const [k, s] of snapshot) {
        this.revs.set(k, s.rev);
        if (s.env.v === null) local.delete(s.ns, s.key);
        else if (local.get(s.ns, s.key) !== s.env.v) local.set(s.ns, s.key, s.env.v);
      }
      for (const ns of GROUP_NAMESPACES) {
        for (const [key, value] of local.entries(ns)) {
          if (snapshot.has(bucketKey(ns, key))) continue;
          if (seeding) this.publish(ns, key, value);
          else local.delete(ns, key);
        }
      }
    });
    if (seeding) this.log(`cluster: seeded the group's definitions from this instance`);
    this.seenRev = last;
    // Every key, so that the newest revision seen can be compared with the bucket's (caughtUp).
    const w = await this.kv.watch({ key: ">", resumeFromRevision: last + 1 });
    this.watcher = w;
    void (async () => {
      for await (const e of w) {
        this.receive(e.key, e.revision, decode(e.value, e.operation));
        this.seen(e.revision);
      }
    })().catch((e) => this.log(`cluster: definition watch ended: ${errorText(e)}`));
    return store;
  }

  /** Starts applying group changes (after the engine has restored its own). */
  attach(apply: ApplyChange): void {
    this.apply = apply;
    const backlog = this.backlog;
    this.backlog = [];
    for (const c of backlog) this.enqueue(c);
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
    const env: Envelope = { v: value ?? null, o: this.instance, s };
    this.unsent.delete(bk);
    const p = this.kv.put(bk, JSON.stringify(env)).catch((e) => {
      // Kept and re-sent (with whatever the local copy holds then) until the bucket takes it.
      if (!this.unsent.has(bk) && this.own.get(bk) === s) this.log(`cluster: cannot publish ${ns} ${key} to the group (retrying): ${errorText(e)}`);
      if (this.own.get(bk) === s) this.unsent.set(bk, { ns, key });
      this.retry ??= setInterval(() => this.resend(), 1000);
    });
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
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

  private receive(k: string, revision: number, env: Envelope): void {
    const parsed = parseBucketKey(k);
    if (!parsed) return;
    if (revision <= (this.revs.get(k) ?? 0)) return;
    this.revs.set(k, revision);
    const mine = this.own.get(k);
    if (env.o === this.instance) {
      this.seenOwn.set(k, env.s);
      if (mine !== undefined && env.s < mine) return;
    } else if (mine !== undefined && (this.seenOwn.get(k) ?? 0) < mine) return;
    const change: DefinitionChange = { ...parsed, value: env.v ?? undefined };
    if (this.apply) this.enqueue(change);
    else this.backlog.push(change);
  }

  /** Changes apply one at a time, in revision order (a rule after the stream it reads). */
  private enqueue(c: DefinitionChange): void {
    const apply = this.apply!;
    this.chain = this.chain.then(async () => {
      try {
        await apply(c);
        this.applied++;
      } catch (e) {
        this.log(`cluster: cannot apply ${c.ns} ${c.key} from the group: ${errorText(e)}`);
      }
    });
  }
}
