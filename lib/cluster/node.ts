/**
 * One instance's membership of a floe group (docs/group.md): the NATS connection, the
 * group's definitions (definitions.ts), membership and partition ownership (membership.ts,
 * assignment.ts), per-partition checkpoints (checkpoints.ts) and requests to other members
 * (rpc.ts). The daemon's engine owns one when `cluster.nats` is set, none otherwise.
 */
import type { ClusterSettings } from "../config/kuiper.ts";
import { errorText } from "../errors.ts";
import type { DefinitionStore } from "../store/definition-store.ts";
import { assignPartitions } from "./assignment.ts";
import { EntrySigner, groupConnectionOptions, groupSecret } from "./auth.ts";
import { PartitionCheckpoints } from "./checkpoints.ts";
import { DEFINITION_HISTORY, DefinitionSync, type CheckChange } from "./definitions.ts";
import { RefusalLog } from "./refusals.ts";
import { Membership, type Member } from "./membership.ts";
import { connectGroup, openBucket, type NatsConnection } from "./nats.ts";
import type { ReplicatedStore } from "./replicated-store.ts";
import { GroupRpc } from "./rpc.ts";

/** `GET /cluster`. */
export interface ClusterView {
  readonly group: string;
  readonly instance: string;
  readonly nats: readonly string[];
  /** Whether this instance reaches NATS now. */
  readonly connected: boolean;
  /** Definition writes of this instance the group's bucket has not taken yet (re-sent until it does). */
  readonly unsentDefinitions: number;
  /** Group entries this member refused (unsigned or tampered definitions, checkpoints, heartbeats; invalid ids or definitions; a stale owner's writes), and the last one. */
  readonly refusedEntries: ReturnType<RefusalLog["view"]>;
  /** This member's checkpoint writes refused because a newer owner had claimed the partition. */
  readonly fencedWrites: number;
  readonly leader: string;
  readonly partitions: number;
  readonly instances: readonly {
    readonly instance: string;
    readonly rest: string;
    readonly startedAt: number;
    readonly lastSeen: number;
    readonly live: boolean;
    readonly partitions: readonly number[];
  }[];
}

export class ClusterNode {
  /** The managers' store (set by `replicate`). */
  store: ReplicatedStore | undefined;
  private readonly listeners = new Set<(live: readonly string[]) => void>();

  private constructor(
    readonly settings: ClusterSettings,
    readonly nc: NatsConnection,
    /** Entries refused from the group's buckets (refusals.ts). */
    readonly refusals: RefusalLog,
    readonly definitions: DefinitionSync,
    readonly members: Membership,
    readonly checkpoints: PartitionCheckpoints,
    readonly rpc: GroupRpc,
    /** Signs and verifies what members send each other with the group secret (two-stage partials too). */
    readonly signer: EntrySigner,
    private readonly log: (line: string) => void,
  ) {
    members.onChange = (live) => {
      const owned = this.owned();
      this.log(`cluster ${settings.group}: live members ${live.join(", ")}; ${settings.instance} owns partitions [${owned.join(",")}]`);
      for (const fn of this.listeners) fn(live);
    };
  }

  get instance(): string {
    return this.settings.instance;
  }

  /** Connects and opens the group's buckets; nothing is shared until `replicate` and `join`. */
  static async connect(settings: ClusterSettings, log: (line: string) => void): Promise<ClusterNode> {
    const signer = new EntrySigner(groupSecret(settings.auth));
    const nc = await connectGroup(settings.nats, groupConnectionOptions(settings.nats, settings.auth, `floe ${settings.group}/${settings.instance}`));
    try {
      const g = settings.group;
      const defs = await openBucket(nc, `floe_${g}`, { description: `floe group ${g}: definitions`, history: DEFINITION_HISTORY });
      // Expired heartbeats are garbage-collected by the bucket; liveness itself is the lease (membership.ts).
      const mem = await openBucket(nc, `floe_${g}_members`, { description: `floe group ${g}: members`, ttl: Math.max(60_000, settings.leaseMs * 10) });
      const state = await openBucket(nc, `floe_${g}_state`, { description: `floe group ${g}: partition checkpoints` });
      const chunk = Math.max(4096, Math.min(nc.info?.max_payload ?? 1 << 20, 1 << 20) - 8192);
      const link = { up: true };
      void (async () => {
        for await (const st of nc.status()) {
          if (st.type === "disconnect") link.up = false;
          else if (st.type === "reconnect") link.up = true;
        }
      })().catch(() => {});
      const refusals = new RefusalLog(log);
      const checkpoints = new PartitionCheckpoints(state, settings.instance, chunk, signer, refusals, log);
      await checkpoints.watch();
      return new ClusterNode(
        settings,
        nc,
        refusals,
        new DefinitionSync(defs, settings.instance, signer, refusals, log, () => link.up && !nc.isClosed()),
        new Membership(mem, settings.instance, settings.heartbeatMs, settings.leaseMs, signer, refusals, log),
        checkpoints,
        new GroupRpc(nc, g, settings.instance),
        signer,
        log,
      );
    } catch (e) {
      await nc.close().catch(() => {});
      throw e;
    }
  }

  /** Brings `local` in line with the group (entries `check` refuses are not taken) and returns the store the managers use. */
  async replicate(local: DefinitionStore, check?: CheckChange): Promise<ReplicatedStore> {
    this.store = await this.definitions.open(local, check);
    return this.store;
  }

  /** Joins the membership with this instance's REST address. */
  join(rest: string): Promise<void> {
    return this.members.join(rest);
  }

  /** Calls `fn` whenever the live members change (ownership may have moved); returns the unsubscribe. */
  onMembers(fn: (live: readonly string[]) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Partitions (of `partitions`, default the group's count) this instance owns now. */
  owned(partitions = this.settings.partitions): number[] {
    return assignPartitions(partitions, this.members.liveIds()).get(this.instance) ?? [];
  }

  view(): ClusterView {
    const live = this.members.liveIds();
    const assignment = assignPartitions(this.settings.partitions, live);
    const all = new Map<string, Member>(this.members.all().map((m) => [m.instance, m]));
    return {
      group: this.settings.group,
      instance: this.instance,
      nats: this.settings.nats,
      connected: this.definitions.isConnected,
      unsentDefinitions: this.definitions.unsentCount,
      refusedEntries: this.refusals.view(),
      fencedWrites: this.checkpoints.fencedWrites,
      leader: this.members.leader() ?? "",
      partitions: this.settings.partitions,
      instances: [...all.values()].map((m) => ({
        instance: m.instance,
        rest: m.rest,
        startedAt: m.startedAt,
        lastSeen: m.lastSeen,
        live: live.includes(m.instance),
        partitions: assignment.get(m.instance) ?? [],
      })),
    };
  }

  /** Leaves the group (graceful stop) and closes the connection after pending writes are stored. */
  async close(): Promise<void> {
    this.rpc.stop();
    this.checkpoints.stop();
    await this.members.leave();
    this.definitions.stop();
    await this.definitions.flush();
    try {
      await this.nc.drain();
    } catch (e) {
      this.log(`cluster: closing the NATS connection: ${errorText(e)}`);
    }
  }
}
