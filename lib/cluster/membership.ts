/**
 * Group membership: every instance puts a heartbeat `{instance, rest, startedAt}` under its own
 * key in the bucket `floe_<group>_members` every `heartbeatMs`, and watches the others. A member
 * is live while its last heartbeat is younger than `leaseMs`, measured on this instance's clock
 * when the heartbeat arrives (no clock agreement needed between machines). A graceful stop
 * deletes the key, so its partitions move at once; after `kill -9` they move once the lease runs
 * out (≤ leaseMs + heartbeatMs + the check interval). Heartbeats carry the group secret's HMAC:
 * one without it is refused (counted), so a writer without the secret cannot join or take partitions.
 */
import type { KV } from "./nats.ts";
import { errorText } from "../errors.ts";
import type { EntrySigner } from "./auth.ts";
import type { RefusalLog } from "./refusals.ts";

export interface MemberInfo {
  readonly instance: string;
  /** The member's REST address (empty until it listens). */
  readonly rest: string;
  readonly startedAt: number;
}

export interface Member extends MemberInfo {
  /** Local time of the last heartbeat seen. */
  readonly lastSeen: number;
}

export class Membership {
  private readonly members = new Map<string, Member>();
  private beat: ReturnType<typeof setInterval> | undefined;
  private check: ReturnType<typeof setInterval> | undefined;
  private watcher: { stop(): void } | undefined;
  private live: string[] = [];
  private info: MemberInfo;
  /** When this member's last heartbeat was stored. */
  private beatOk = 0;
  /** Told when the set of live members changes (sorted ids). */
  onChange: ((live: readonly string[]) => void) | undefined;

  constructor(
    private readonly kv: KV,
    instance: string,
    private readonly heartbeatMs: number,
    private readonly leaseMs: number,
    private readonly signer: EntrySigner,
    private readonly refusals: RefusalLog,
    private readonly log: (line: string) => void,
  ) {
    this.info = { instance, rest: "", startedAt: Date.now() };
  }

  get self(): string {
    return this.info.instance;
  }

  /** Joins: first heartbeat, then beats and watches. `rest` is this member's REST address. */
  async join(rest: string): Promise<void> {
    this.info = { ...this.info, rest };
    this.members.set(this.self, { ...this.info, lastSeen: Date.now() });
    await this.kv.put(this.self, this.heartbeat());
    this.beatOk = Date.now();
    // The members there are now, before the first answer on ownership: judged with the member
    // list half read, this one would own (and start) partitions that others run.
    const last = (await this.kv.status()).streamInfo.state.last_seq;
    for await (const k of await this.kv.keys()) {
      const e = await this.kv.get(k);
      if (e && e.operation === "PUT") this.heard(e.key, e.value, Math.min(Date.now(), e.created.getTime()));
    }
    const w = await this.kv.watch({ key: ">", resumeFromRevision: last + 1 });
    this.watcher = w;
    void (async () => {
      for await (const e of w) {
        if (e.operation !== "PUT") this.members.delete(e.key);
        else this.heard(e.key, e.value, Date.now());
        this.recompute();
      }
    })().catch((e) => this.log(`cluster: membership watch ended: ${errorText(e)}`));
    this.beat = setInterval(() => {
      this.kv.put(this.self, this.heartbeat()).then(
        () => (this.beatOk = Date.now()),
        (e) => this.log(`cluster: heartbeat failed: ${errorText(e)}`),
      );
    }, this.heartbeatMs);
    this.check = setInterval(() => this.recompute(), Math.max(100, Math.floor(this.heartbeatMs / 2)));
    this.recompute();
  }

  private heartbeat(): string {
    const { rest, startedAt } = this.info;
    return JSON.stringify({ instance: this.self, rest, startedAt, h: this.signer.sign(this.self, JSON.stringify([rest, startedAt])) });
  }

  /**
   * Whether this member may act as the owner of its partitions now: its last heartbeat was stored
   * less than a lease ago (the others count it live as long). A member paused past its lease
   * (SIGSTOP, a long GC, a stalled disk) finds this false as soon as it runs again, before any
   * timer of its own could write or acknowledge anything.
   */
  holdsLease(now = Date.now()): boolean {
    return this.beat !== undefined && now - this.beatOk < this.leaseMs;
  }

  /** A heartbeat of `id` seen at `seen` (local time; the server's write time for what was there before this member joined). */
  private heard(id: string, value: Uint8Array, seen: number): void {
    try {
      const i = JSON.parse(new TextDecoder().decode(value)) as MemberInfo & { h?: unknown };
      if (!this.signer.verify(id, JSON.stringify([i.rest, i.startedAt]), i.h)) {
        this.refusals.refuse(`${id} (heartbeat)`, "no valid signature of the group secret");
        return;
      }
      const self = id === this.self;
      this.members.set(id, { instance: id, rest: self ? this.info.rest : String(i.rest ?? ""), startedAt: self ? this.info.startedAt : Number(i.startedAt ?? 0), lastSeen: seen });
    } catch {
      // not a heartbeat
    }
  }

  /** Live members, sorted by id (this one included while its heartbeats are stored). */
  liveIds(): readonly string[] {
    return this.live;
  }

  /** Every member seen with its last heartbeat (dead ones until their key expires). */
  all(): Member[] {
    return [...this.members.values()].sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0));
  }

  isLive(id: string): boolean {
    return this.live.includes(id);
  }

  /** The longest-running live member (ties: the smaller id): the group's leader, for tasks one member does. */
  leader(): string | undefined {
    let best: Member | undefined;
    for (const id of this.live) {
      const m = this.members.get(id);
      if (!m) continue;
      if (!best || m.startedAt < best.startedAt || (m.startedAt === best.startedAt && m.instance < best.instance)) best = m;
    }
    return best?.instance;
  }

  /** Leaves the group: stops beating and deletes the key (others reassign at once). */
  async leave(): Promise<void> {
    this.stopTimers();
    try {
      await this.kv.delete(this.self);
    } catch (e) {
      this.log(`cluster: cannot leave the group cleanly: ${errorText(e)}`);
    }
  }

  stopTimers(): void {
    if (this.beat) clearInterval(this.beat);
    if (this.check) clearInterval(this.check);
    this.beat = this.check = undefined;
    this.watcher?.stop();
    this.watcher = undefined;
  }

  private recompute(): void {
    const now = Date.now();
    // This member judges itself by its own stored heartbeats: cut off from NATS for a lease, it
    // gives its partitions up about when the others take them, rather than keep reading them too.
    const self = this.members.get(this.self);
    const selfLive = this.holdsLease(now);
    if (self && selfLive) this.members.set(this.self, { ...self, lastSeen: now });
    const live = [...this.members.values()].filter((m) => (m.instance === this.self ? selfLive : now - m.lastSeen < this.leaseMs)).map((m) => m.instance).sort();
    if (live.length === this.live.length && live.every((id, i) => id === this.live[i])) return;
    this.live = live;
    this.onChange?.(live);
  }
}
