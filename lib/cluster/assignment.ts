/**
 * Which instance owns which partition: rendezvous (highest random weight) hashing of each
 * partition over the live instances. Every member computes the same answer from the same member
 * list, with no coordination; when an instance joins or leaves, only the partitions it wins or
 * held move (about P/N of them), the rest stay where their state is.
 */

/** A 53-bit weight of (instance, partition): deterministic across processes and machines. */
function weight(instance: string, partition: number): number {
  return Number(Bun.hash.wyhash(`${instance}\u0000${partition}`, 0x5eedn) & 0x1fffffffffffffn);
}

/** The owner of `partition` among `instances` (undefined when there is none). Ties go to the smaller id. */
export function ownerOf(partition: number, instances: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestW = -1;
  for (const id of instances) {
    const w = weight(id, partition);
    if (w > bestW || (w === bestW && best !== undefined && id < best)) {
      best = id;
      bestW = w;
    }
  }
  return best;
}

/** Partitions 0..count-1 by owner (every live instance has an entry, possibly empty). */
export function assignPartitions(count: number, instances: readonly string[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const id of [...instances].sort()) out.set(id, []);
  for (let p = 0; p < count; p++) {
    const o = ownerOf(p, instances);
    if (o !== undefined) out.get(o)!.push(p);
  }
  return out;
}
