/**
 * Exactness at a take-over over JetStream. A partition's run acknowledges its messages once its
 * local checkpoint covers them (connectors/nats/source.ts, ackMode checkpoint), and that checkpoint
 * reaches the group's store a moment later (server/partitioned-run.ts). An owner killed in that
 * moment leaves messages acknowledged that the group's checkpoint does not hold. The new owner
 * therefore rewinds the partition's durable consumer to the checkpoint's read position before it
 * starts: when the consumer's ack floor is past the checkpoint's stream sequence, the consumer is
 * recreated (same configuration) to deliver from the sequence after it, and the source skips
 * nothing the restored state lacks.
 *
 * A stateful run's sources acknowledge at checkpoints and, restored at a position after 0, recreate
 * their consumer to deliver from the next sequence themselves (connectors/nats/consumer.ts,
 * `ensureConsumer`'s `resumeAt`): the take-over leaves those to them (`takeOverRewinds`), so the
 * consumer is created once on its path, not twice.
 *
 * An owner killed before any of its checkpoints reached the group leaves no checkpoint at all,
 * yet it may have acknowledged what its local checkpoints covered: the new owner, starting from
 * an empty state, restarts the partition's durable consumer from its beginning (`restartConsumer`).
 */
import { DeliverPolicy, jetstreamManager, type ConsumerConfig } from "@nats-io/jetstream";
import { decodeState } from "../store/state-codec.ts";
import type { NatsConnection } from "./nats.ts";

/** A JetStream source's read position in a checkpoint (`$$offset` of connectors/nats/source.ts). */
export interface JsOffset {
  readonly stream: string;
  readonly consumer: string;
  readonly seq: number;
}

/**
 * The JetStream read positions of an encoded checkpoint (runtime/checkpoint.ts) that a take-over
 * rewinds itself (`rewindConsumer`) before the run starts from it. A stateful run's sources (the
 * checkpoint holds operator state) acknowledge at checkpoints and resume a position after 0 by
 * recreating their consumer themselves: only its positions 0 are left here. A stateless run's
 * sources acknowledge as the rule takes messages and resume from their consumer's
 * acknowledgement floor: all of its positions are.
 */
export function takeOverRewinds(state: string): JsOffset[] {
  const saved = decoded(state);
  const ops = saved && typeof saved === "object" ? (saved as { ops?: unknown }).ops : undefined;
  const stateful = !!ops && typeof ops === "object" && Object.keys(ops).length > 0;
  return offsetsOf(saved).filter((o) => !stateful || o.seq <= 0);
}

/** The decoded checkpoint; undefined when it is not one. */
function decoded(state: string): unknown {
  try {
    return decodeState(state);
  } catch {
    return undefined;
  }
}

/** The read positions a decoded checkpoint holds. */
function offsetsOf(saved: unknown): JsOffset[] {
  const sources = saved && typeof saved === "object" ? (saved as { sources?: unknown }).sources : undefined;
  if (!sources || typeof sources !== "object") return [];
  const out: JsOffset[] = [];
  for (const s of Object.values(sources as Record<string, unknown>)) {
    const o = s && typeof s === "object" ? (s as { $$offset?: unknown }).$$offset : undefined;
    if (!o || typeof o !== "object") continue;
    const { stream, consumer, seq } = o as Record<string, unknown>;
    if (typeof stream === "string" && stream && typeof consumer === "string" && consumer && typeof seq === "number") out.push({ stream, consumer, seq });
  }
  return out;
}

/**
 * Rewinds durable consumer `o.consumer` to deliver from `o.seq + 1` when it has acknowledged
 * beyond `o.seq`; true when it did. A checkpoint that read nothing of it yet (`seq` 0, taken
 * before its first message was consumed) restarts it from its start when it delivered anything
 * (`restartConsumer`): the source resumes a restored position after it by itself, but not position
 * 0, and what the dead owner was delivered would otherwise come back only after ackWait, behind
 * newer messages — too late for the windows it belongs to. A consumer that does not exist (or
 * another server) is left alone.
 */
export async function rewindConsumer(nc: NatsConnection, o: JsOffset): Promise<boolean> {
  if (o.seq <= 0) return restartConsumer(nc, o.stream, o.consumer);
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  let info;
  try {
    info = await jsm.consumers.info(o.stream, o.consumer);
  } catch {
    return false;
  }
  if (info.ack_floor.stream_seq <= o.seq) return false;
  const cfg: Partial<ConsumerConfig> = { ...info.config, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: o.seq + 1 };
  delete cfg.opt_start_time;
  await jsm.consumers.delete(o.stream, o.consumer);
  await jsm.consumers.add(o.stream, cfg);
  return true;
}

/**
 * Recreates durable consumer `consumer` with its own configuration when it has delivered anything,
 * so it delivers again from its start (its deliver policy): for a partition taken over with no
 * group checkpoint, whose state is therefore empty. True when it did; a missing consumer is left alone.
 */
export async function restartConsumer(nc: NatsConnection, stream: string, consumer: string): Promise<boolean> {
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  let info;
  try {
    info = await jsm.consumers.info(stream, consumer);
  } catch {
    return false;
  }
  if (info.delivered.stream_seq === 0 && info.ack_floor.stream_seq === 0) return false;
  await jsm.consumers.delete(stream, consumer);
  await jsm.consumers.add(stream, { ...info.config });
  return true;
}
