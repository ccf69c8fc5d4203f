/**
 * A partitioned stream as a rule in a floe group reads it (docs/group.md): a stream whose
 * DATASOURCE holds `{partition}` is split into partitions, and each partition's run reads it with
 * `{partition}` replaced (server/partitioned-run.ts runs them); the checks and warnings a rule over
 * one gets, the JetStream durables a partition reads, and the epoch its sinks' messages carry.
 */
import type { StreamDef } from "../plan/streams.ts";
import { ruleSources, type StoredRule } from "../store/stored-rule.ts";
import { isAggregateCall } from "../plan/analyze.ts";
import { planTwoStage } from "../plan/two-stage.ts";
import type { FunctionRegistry } from "../functions/registry.ts";

export const PARTITION_TOKEN = "{partition}";

/** A partitioned stream as a rule reads it. */
export interface Partitioning {
  readonly stream: StreamDef;
  /** Partitions: EXTRA's `partitions`, else the group's `cluster.partitions`. */
  readonly count: number;
  /** EXTRA's `partitionKey`: the field that determines the partition (for the GROUP BY warning). */
  readonly key: string;
}

function extraOf(s: StreamDef): Record<string, unknown> {
  try {
    const v = JSON.parse(s.options.EXTRA ?? "{}") as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The partitioned stream a rule reads (SQL rules only), or undefined. */
export function partitionedStream(def: StoredRule, streams: ReadonlyMap<string, StreamDef>, groupCount: number): Partitioning | undefined {
  if (def.graph !== undefined) return undefined;
  for (const name of ruleSources(def)) {
    const s = streams.get(name);
    if (!s || s.kind !== "stream" || !(s.options.DATASOURCE ?? "").includes(PARTITION_TOKEN)) continue;
    const extra = extraOf(s);
    const n = Number(extra.partitions);
    return { stream: s, count: Number.isInteger(n) && n > 0 ? n : groupCount, key: typeof extra.partitionKey === "string" ? extra.partitionKey : "" };
  }
  return undefined;
}

/**
 * The definitions a run of partition `p` plans with: `{partition}` in the stream's DATASOURCE
 * and EXTRA (e.g. a per-partition durable consumer name) becomes `p`.
 */
export function streamsForPartition(streams: ReadonlyMap<string, StreamDef>, stream: StreamDef, p: number): Map<string, StreamDef> {
  const out = new Map(streams);
  const o = stream.options;
  const sub = (v: string | undefined) => (v === undefined ? undefined : v.replaceAll(PARTITION_TOKEN, String(p)));
  out.set(stream.name, { ...stream, options: { ...o, DATASOURCE: sub(o.DATASOURCE), ...(o.EXTRA !== undefined ? { EXTRA: sub(o.EXTRA) } : {}) } });
  return out;
}

/**
 * The warning for a rule whose GROUP BY lacks the stream's partition key: its groups are then
 * computed per partition, so a key spread over partitions yields one partial group per partition.
 */
export function partitionKeyWarning(def: StoredRule, part: Partitioning): string | undefined {
  if (!part.key || !def.select || def.select.groupBy.length === 0) return undefined;
  const key = part.key.toLowerCase();
  if (def.select.groupBy.some((e) => e.kind === "field" && e.name.toLowerCase() === key)) return undefined;
  return `rule ${def.id}: GROUP BY does not contain ${part.key}, the partition key of stream ${part.stream.name}: each partition computes its own groups`;
}

/** The two-stage split of a rule whose GROUP BY lacks the partition key (plan/two-stage.ts), a reason it has none, or undefined when it needs none. */
export function twoStageOf(def: StoredRule, part: Partitioning, functions: FunctionRegistry): ReturnType<typeof planTwoStage> {
  if (!def.select) return undefined;
  return planTwoStage(def.select, part.key, def.options.isEventTime, isAggregateCall(functions));
}

/**
 * The JetStream durables partition `p` of a `nats` stream reads (EXTRA's `stream` and `durable`,
 * `{partition}` replaced); none when the stream is not JetStream or leaves them to discovery.
 */
export function partitionDurables(stream: StreamDef, p: number): { stream: string; consumer: string }[] {
  if ((stream.options.TYPE ?? "").toLowerCase() !== "nats") return [];
  const extra = extraOf(stream);
  const sub = (v: unknown) => (typeof v === "string" ? v.replaceAll(PARTITION_TOKEN, String(p)) : "");
  const s = sub(extra.stream);
  const d = sub(extra.durable);
  return s && d ? [{ stream: s, consumer: d }] : [];
}

/**
 * The refusal of a partitioned `nats` stream whose partitions would read one JetStream durable
 * (`durableOf(p)`: partition p's resolved `durable`, "" for none): a durable keeps the filter
 * subject it was created with, so the other partitions' runs would read the first one's messages,
 * and each run starting from no read position recreates a durable with unacknowledged deliveries
 * (connectors/nats/consumer.ts) under the reader of another partition started at the same time.
 */
export async function sharedDurableError(stream: StreamDef, count: number, durableOf: (p: number) => Promise<string>): Promise<string | undefined> {
  if (count < 2 || (stream.options.TYPE ?? "").toLowerCase() !== "nats") return undefined;
  const [a, b] = await Promise.all([durableOf(0), durableOf(1)]);
  if (!a || a !== b) return undefined;
  return `stream ${stream.name}: every partition would read JetStream durable ${a}: put ${PARTITION_TOKEN} in EXTRA's durable (e.g. "${a}_${PARTITION_TOKEN}") so that each partition has its own`;
}

/** A partition run's actions under ownership `epoch`: each `nats` sink's messages carry it in header `Floe-Epoch`, so that a consumer can tell a superseded owner's late output. */
export function withEpochHeader(actions: readonly Record<string, unknown>[], epoch: number): Record<string, unknown>[] {
  return actions.map((a) => {
    const props = a.nats;
    if (!props || typeof props !== "object" || Array.isArray(props)) return a;
    const p = props as Record<string, unknown>;
    const headers = p.headers && typeof p.headers === "object" && !Array.isArray(p.headers) ? (p.headers as Record<string, unknown>) : {};
    return { ...a, nats: { ...p, headers: { ...headers, "Floe-Epoch": String(epoch) } } };
  });
}

/** The id of partition `p`'s run: not a valid rule id, so it names no other rule's data. */
export function partitionRunId(rule: string, p: number): string {
  return `${rule}.p${p}`;
}
