/**
 * A drain group: the rules of one shared stream that share their evaluation (shared-eval.ts, the
 * same key) also share one drain. The group's leader takes each message from its bus subscription
 * and hands the batch to every parked member, which processes it as its own drain would have
 * (its own counts, errors, sinks, acknowledgements); the bus queues nothing for a parked member
 * and wakes it for nothing, so a message costs the group one queue, one wake and one drain.
 *
 * A member parks only once it and the leader have taken everything (both queues empty: from
 * there on they see the same messages); it unparks — the leader's waiting messages copied to its
 * own queue, which the bus fills again — when it is traced, or when it leads after the leader
 * left, or when its run has no room — its sinks', or its operators' behind a spread (a leader
 * without room hands the lead on): a slow member waits on its own queue, as it would alone, while
 * the others go on.
 *
 * A batch the group shared whole (shared-eval.ts `summarize`) is counted once for the lazy parked
 * members, in the group's tally (group-tally.ts), and only its items go to each one's sinks; a
 * message the predicate index spares the leader is counted there too. A member catches up with
 * the tally when its counts are read, when it unparks and when its run fails. The member whose
 * rule counts the shared stream's source node (shown by every rule) follows eagerly, batch by batch.
 */
import type { SourceMessage } from "../source/message.ts";
import type { Subscription } from "../core/bus.ts";
import type { Item } from "../core/item.ts";
import { DRAIN_STEP } from "../core/turn.ts";
import { GroupTally } from "./group-tally.ts";
import { sharedStats } from "./shared-eval.ts";

/** What a batch the group shared whole gives each member (shared-eval.ts BatchOutcome). */
export interface SharedBatch {
  readonly counts: Float64Array;
  readonly latency: Float64Array;
  readonly items: readonly Item[];
}

/** What the group needs of a member (drain.ts Drain). */
export interface GroupMember {
  readonly sub: Subscription<SourceMessage> | undefined;
  /** The member's run stopped reading, or is traced (it then takes its own messages). */
  readonly alone: boolean;
  /** Results the member's run may still produce before a sink (or what waits behind a spread) would have to wait. */
  room(): number;
  /** Processes the leader's batch, taken at `now` (its clock's reading), as its own drain would have. */
  follow(buf: readonly SourceMessage[], n: number, now: number): void;
  /** Schedules the member's own drain. */
  wake(): void;
  /** The member counts the shared source node: it follows eagerly. */
  readonly eager: boolean;
  /** Counted through the group's tally (set by the group while the member is parked, not eager). */
  lazy: boolean;
  /** A lazy member begins counting through `t`. */
  markTally(t: GroupTally): void;
  /** Adds what `t` counted since the member last looked. */
  catchUpTally(t: GroupTally): void;
  /** A lazy member's part of a batch shared whole, taken at `now`: its items into the member's sinks. */
  followItems(items: readonly Item[], now: number): void;
  /** A message the index spared the leader at `now`, counted by an eager member as its own skip. */
  skipped(now: number): void;
}

export class DrainGroup {
  private readonly members: GroupMember[] = [];
  private readonly parked: GroupMember[] = [];
  /** The parked members that count eagerly (see the header). */
  private readonly eagerOnes: GroupMember[] = [];
  /** What the lazy parked members count together. */
  readonly tally = new GroupTally();
  private lazyCount = 0;
  leader: GroupMember | undefined;

  private constructor(
    private readonly key: string,
    private readonly groups: Map<string, unknown>,
  ) {}

  /** The group `key` of a shared stream's groups (made with its first member). */
  static join(groups: Map<string, unknown>, key: string, m: GroupMember): DrainGroup {
    let g = groups.get(key) as DrainGroup | undefined;
    if (g === undefined) groups.set(key, (g = new DrainGroup(key, groups)));
    g.members.push(m);
    g.leader ??= m;
    return g;
  }

  /** Members processing the leader's batches besides it. */
  get size(): number {
    return this.parked.length;
  }

  /** How many messages the leader takes in one step: its step shared among the members. */
  step(): number {
    return Math.max(1, Math.floor(DRAIN_STEP / (1 + this.parked.length)));
  }

  /**
   * What the parked members' room allows still, without asking them: their smallest room when it
   * was last asked, less what the leader took since (a row of a message is at most one result per
   * sink, and a member's room only grows otherwise). Asked again once spent, or when members change.
   */
  private budget = 0;

  /**
   * The room of the parked members (the leader's own is its own): a member without room takes its
   * own messages again (unparked: it waits on its sinks as it would alone, the others go on).
   */
  room(own: number): number {
    if (this.budget <= 0) {
      let r = Infinity;
      let full: GroupMember[] | null = null;
      for (const m of this.parked) {
        // A member that stopped reading takes nothing more.
        if (m.alone) continue;
        const x = m.room();
        if (x <= 0) (full ??= []).push(m);
        else if (x < r) r = x;
      }
      if (full !== null) for (const m of full) this.unpark(m);
      this.budget = r;
    }
    return own < this.budget ? own : this.budget;
  }

  /**
   * The leader has no room: a parked member leads instead (with the leader's waiting messages),
   * and the leader waits on its sinks as it would alone, keeping its queue.
   */
  abdicate(m: GroupMember): void {
    const next = this.parked[0];
    if (this.leader !== m || next === undefined) return;
    this.unpark(next);
    this.leader = next;
    this.tell();
    next.wake();
  }

  /**
   * The leader took `buf[0..n)` at `now`: every parked member processes it — the lazy ones, when
   * the group shared it `whole`, through the tally and their sinks only.
   */
  fanOut(buf: readonly SourceMessage[], n: number, now: number, whole: SharedBatch | null): void {
    const p = this.parked;
    if (whole === null) for (let i = 0; i < p.length; i++) p[i]!.follow(buf, n, now);
    else {
      if (this.lazyCount > 0) {
        this.tally.add(whole.counts, whole.latency, n, now);
        sharedStats.batches++;
        sharedStats.replays += n * this.lazyCount;
      }
      const e = this.eagerOnes;
      for (let i = 0; i < e.length; i++) e[i]!.follow(buf, n, now);
      const items = whole.items;
      if (items.length > 0) for (let i = 0; i < p.length; i++) if (p[i]!.lazy) p[i]!.followItems(items, now);
    }
    // Each row is at most one result per sink (an undecoded message: its error, one).
    let spent = 0;
    for (let i = 0; i < n; i++) {
      const d = buf[i]!.decoded;
      spent += Array.isArray(d) ? Math.max(1, d.length) : 1;
    }
    this.budget -= spent;
  }

  /**
   * `m`'s drain emptied its queue: once the leader's is empty too, `m` parks (the leader: every
   * member that has taken everything). Checked between drains, where no batch is half handed out.
   */
  settle(m: GroupMember): void {
    const lead = this.leader?.sub;
    if (!lead || lead.length > 0 || this.parked.length === this.members.length - 1) return;
    let changed = false;
    if (m === this.leader) for (const x of this.members) changed = this.park(x) || changed;
    else changed = this.park(m);
    if (changed) this.tell();
  }

  private park(m: GroupMember): boolean {
    const sub = m.sub;
    if (m === this.leader || !sub || sub.parked || m.alone || sub.length > 0) return false;
    sub.parked = true;
    this.parked.push(m);
    if (m.eager) this.eagerOnes.push(m);
    else {
      m.lazy = true;
      this.lazyCount++;
      m.markTally(this.tally);
    }
    return true;
  }

  /** The parked members' room is asked again. */
  private tell(): void {
    this.budget = 0;
  }

  /** The leader's index spared it a message at `now`: counted for every parked member. */
  skipped(now: number): void {
    if (this.lazyCount > 0) this.tally.skip(now);
    const e = this.eagerOnes;
    for (let i = 0; i < e.length; i++) e[i]!.skipped(now);
  }

  /** A lazy member's counts are read (or its run fails): it adds what the tally counted meanwhile. */
  catchUp(m: GroupMember): void {
    if (m.lazy) m.catchUpTally(this.tally);
  }

  /** The member now counts the shared source node (the rule that did left): a lazy one catches up and follows eagerly. */
  recount(m: GroupMember): void {
    if (!m.lazy || !m.eager) return;
    m.catchUpTally(this.tally);
    m.lazy = false;
    this.lazyCount--;
    this.eagerOnes.push(m);
  }

  /** The member stops counting through the group (it unparks). */
  private unlist(m: GroupMember): void {
    if (m.lazy) {
      m.catchUpTally(this.tally);
      m.lazy = false;
      this.lazyCount--;
      return;
    }
    const i = this.eagerOnes.indexOf(m);
    if (i >= 0) this.eagerOnes.splice(i, 1);
  }

  /** The member takes its own messages again, beginning with those the leader has yet to take. */
  unpark(m: GroupMember): void {
    const sub = m.sub;
    const i = this.parked.indexOf(m);
    if (!sub || i < 0) return;
    this.parked.splice(i, 1);
    this.unlist(m);
    sub.parked = false;
    const lead = this.leader?.sub;
    if (lead) sub.adopt(lead.queue.toArray());
    this.tell();
    if (sub.length > 0) m.wake();
  }

  /** The member's run ends (or stopped reading): another member leads when it led. */
  leave(m: GroupMember): void {
    this.unpark(m);
    const i = this.members.indexOf(m);
    if (i < 0) return;
    this.members.splice(i, 1);
    if (this.leader === m) {
      const next = this.parked[0] ?? this.members.find((x) => !x.alone) ?? this.members[0];
      if (next) this.unpark(next);
      this.leader = next;
      this.tell();
    }
    if (this.members.length === 0) this.groups.delete(this.key);
  }
}
