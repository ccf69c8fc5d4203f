/**
 * A map of a handful of entries as two arrays, looked up by a linear scan: a rule's sources (one,
 * two or three streams). JSC gives the smallest Map a hash table of some 600 bytes, which at
 * thousands of idle rules is a good part of each one's memory; a scan of three keys costs no
 * more than a hash lookup.
 */
export class SmallMap<K, V> implements Iterable<[K, V]> {
  private readonly ks: K[] = [];
  private readonly vs: V[] = [];

  get size(): number {
    return this.ks.length;
  }

  get(k: K): V | undefined {
    const i = this.ks.indexOf(k);
    return i < 0 ? undefined : this.vs[i];
  }

  has(k: K): boolean {
    return this.ks.includes(k);
  }

  set(k: K, v: V): this {
    const i = this.ks.indexOf(k);
    if (i >= 0) this.vs[i] = v;
    else {
      this.ks.push(k);
      this.vs.push(v);
    }
    return this;
  }

  keys(): IterableIterator<K> {
    return this.ks.values();
  }

  values(): IterableIterator<V> {
    return this.vs.values();
  }

  *[Symbol.iterator](): Iterator<[K, V]> {
    for (let i = 0; i < this.ks.length; i++) yield [this.ks[i]!, this.vs[i]!];
  }
}
