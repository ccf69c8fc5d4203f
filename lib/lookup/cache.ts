/**
 * The `lookup` sub-object every lookup table accepts (rules-and-sinks.md §11.3):
 * `{"cache":true,"cacheTtl":"5m","cacheMissingKey":false}` caches results per key value for
 * `cacheTtl`; empty results only with `cacheMissingKey`. Concurrent lookups of one key share the
 * pending query. The cache is bounded: past MAX_ENTRIES the oldest entry goes.
 */
import type { Obj, Value } from "../value/values.ts";
import { PropReader, type Props } from "../config/props.ts";
import type { LookupSource } from "./table.ts";
import { valuesKey } from "./match.ts";

const MAX_ENTRIES = 100_000;

export interface LookupCacheConf {
  readonly ttlMs: number;
  readonly missingKey: boolean;
}

/** The cache settings of a table's props, or undefined when caching is off. */
export function lookupCacheConf(props: Props): LookupCacheConf | undefined {
  const sub = new PropReader(props).obj("lookup");
  if (!sub) return undefined;
  const r = new PropReader(sub);
  if (!r.bool("cache")) return undefined;
  return { ttlMs: r.duration("cacheTtl", 300_000), missingKey: r.bool("cacheMissingKey") };
}

interface Entry {
  rows: Obj[] | Promise<Obj[]>;
  at: number;
}

export class CachedLookup implements LookupSource {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly inner: LookupSource,
    private readonly conf: LookupCacheConf,
    private readonly now: () => number,
  ) {}

  open(): Promise<void> | void {
    return this.inner.open();
  }

  lookup(keys: readonly string[], values: readonly Value[]): Obj[] | Promise<Obj[]> {
    const k = valuesKey(values);
    const now = this.now();
    const hit = this.entries.get(k);
    if (hit && now - hit.at < this.conf.ttlMs) return hit.rows;
    if (hit) this.entries.delete(k);
    const rows = this.inner.lookup(keys, values);
    if (!(rows instanceof Promise)) {
      this.store(k, rows, now);
      return rows;
    }
    const entry: Entry = { rows, at: now };
    this.put(k, entry);
    return rows.then(
      (r) => {
        if (this.entries.get(k) === entry) {
          if (r.length || this.conf.missingKey) entry.rows = r;
          else this.entries.delete(k);
        }
        return r;
      },
      (e: unknown) => {
        if (this.entries.get(k) === entry) this.entries.delete(k);
        throw e;
      },
    );
  }

  private store(k: string, rows: Obj[], at: number): void {
    if (rows.length || this.conf.missingKey) this.put(k, { rows, at });
  }

  private put(k: string, e: Entry): void {
    this.entries.set(k, e);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  close(): Promise<void> | void {
    this.entries.clear();
    return this.inner.close();
  }
}
