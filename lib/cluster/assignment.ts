/**
 * Which instance owns which partition: rendezvous (highest random weight) hashing with bounded
 * loads. Every (partition, instance) pair has a deterministic weight; going down the pairs from
 * the heaviest, a partition goes to the first instance that still has room: ⌊P/N⌋ partitions
 * each, and P mod N of them one more. Every member computes the same answer from the same member list, with
 * no coordination; the load is balanced to within one partition (plain rendezvous hashing gave 6,
 * 4 and 2 of 12 partitions to three members, so the busiest one bounded the group at ×2); when an
 * instance joins or leaves, mostly the partitions it wins or held move, a few others rebalance.
 */

/** A 53-bit weight of (instance, partition): deterministic across processes and machines. */
function weight(instance: string, partition: number): number {
  return Number(Bun.hash.wyhash(`${instance}\u0000${partition}`, 0x5eedn) & 0x1fffffffffffffn);
}

let cached: { key: string; out: Map<string, number[]> } | undefined;

/** Partitions 0..count-1 by owner (every live instance has an entry, possibly empty, partitions ascending). */
export function assignPartitions(count: number, instances: readonly string[]): Map<string, number[]> {
  const ids = [...new Set(instances)].sort();
  const key = `${count}\u0000${ids.join("\u0000")}`;
  if (cached?.key === key) return new Map([...cached.out].map(([k, v]) => [k, [...v]]));
  const out = new Map<string, number[]>();
  for (const id of ids) out.set(id, []);
  if (ids.length > 0) {
    const lo = Math.floor(count / ids.length);
    // How many instances may still take one partition more than ⌊P/N⌋.
    let extra = count % ids.length;
    const pairs: { w: number; p: number; id: string }[] = [];
    for (let p = 0; p < count; p++) for (const id of ids) pairs.push({ w: weight(id, p), p, id });
    // Heaviest first; ties go to the smaller id.
    pairs.sort((a, b) => b.w - a.w || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const owned = new Array<boolean>(count).fill(false);
    for (const { p, id } of pairs) {
      const list = out.get(id)!;
      if (owned[p] || list.length > lo || (list.length === lo && extra === 0)) continue;
      if (list.length === lo) extra--;
      owned[p] = true;
      list.push(p);
    }
    for (const list of out.values()) list.sort((a, b) => a - b);
  }
  cached = { key, out };
  return new Map([...out].map(([k, v]) => [k, [...v]]));
}

/** The owner of `partition` of `count` among `instances` (undefined when there is none). */
export function ownerOf(partition: number, count: number, instances: readonly string[]): string | undefined {
  for (const [id, ps] of assignPartitions(count, instances)) if (ps.includes(partition)) return id;
  return undefined;
}
