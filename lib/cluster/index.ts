/** A floe group over NATS JetStream (docs/group.md). */
export { assignPartitions, ownerOf } from "./assignment.ts";
export { FencedError, PartitionCheckpoints, type ClaimBasis, type Held, type PartitionCheckpoint, type ReadCheckpoint } from "./checkpoints.ts";
export { DefinitionSync, GroupEntryRefused, type ApplyChange, type CheckChange, type DefinitionChange } from "./definitions.ts";
export { EntrySigner, groupConnectionOptions, groupSecret } from "./auth.ts";
export { Membership, type Member, type MemberInfo } from "./membership.ts";
export { ClusterNode, type ClusterView } from "./node.ts";
export { GROUP_NAMESPACES, ReplicatedStore } from "./replicated-store.ts";
export { GroupRpc, type RpcHandler } from "./rpc.ts";
export { restartConsumer, rewindConsumer, takeOverRewinds, type JsOffset } from "./rewind.ts";
export { RefusalLog } from "./refusals.ts";
export { decodePartial, ensurePartialsStream, lastReleased, publishReleased, PartialGate, partialsSubject, publishPartial, purgePartials, readPartials, type Partial, type PartialWindow } from "./partials.ts";
