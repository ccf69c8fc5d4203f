/**
 * A bounded least-recently-used map: patterns can come from data, so the cache of compiled
 * patterns holds at most `limit` entries and evicts the one used longest ago.
 */
export class Lru<V> {
  private readonly map = new Map<string, V>();
  /** The key of the last get (hit) or set, and its value: the young end of `map`. */
  private lastKey: string | undefined = undefined;
  private lastValue: V | undefined = undefined;
  constructor(readonly limit: number) {}

  get size(): number {
    return this.map.size;
  }

  /** The value for `key`, marked as the most recently used; undefined when absent. */
  get(key: string): V | undefined {
    // The key used last is already at the young end: a row after row of one constant text (a
    // LIKE pattern, a replacement template) costs one comparison, not a Map delete and insert.
    if (key === this.lastKey) return this.lastValue;
    const v = this.map.get(key);
    if (v !== undefined) {
      // A Map iterates in insertion order: re-inserting moves the key to the young end.
      this.map.delete(key);
      this.map.set(key, v);
      this.lastKey = key;
      this.lastValue = v;
    }
    return v;
  }

  set(key: string, v: V): void {
    this.map.delete(key);
    if (this.map.size >= this.limit) this.map.delete(this.map.keys().next().value!);
    this.map.set(key, v);
    this.lastKey = key;
    this.lastValue = v;
  }
}
