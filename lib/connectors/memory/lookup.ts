/**
 * The memory lookup table (rules-and-sinks.md §10.3): a map key value → latest row, fed by every
 * row memory sinks publish on the table's topic (wildcards allowed). Rows of a sink with
 * `rowkindField` are applied by kind (`delete` removes, the others upsert) under the sink's key
 * field; plain rows upsert under the table's KEY. One map per pub/sub, topic and key, shared by
 * every holder: it exists while something holds it open (the daemon from CREATE TABLE to DROP,
 * lib/server/lookup-tables.ts; pipe mode while the run uses it) and starts empty (not persisted).
 *
 * A table holds at most `maxBytes` of rows (estimated, core/byte-budget.ts; the property of its
 * first opener, default 64 MiB): a row that would take it over is refused — a new key is not
 * added, an existing one keeps its previous row — and counted (`memoryTableStats`, `/metrics`).
 * Lookups never see part of a row, and no row is evicted behind the rules' back.
 */
import { ByteBudget, estimateBytes } from "../../core/byte-budget.ts";
import { EngineError } from "../../errors.ts";
import type { Obj, Value } from "../../value/values.ts";
import { checkFilter, type MemoryPubSub, type RowKind, type Rows } from "./pubsub.ts";
import { PropReader, type Props } from "../../config/props.ts";
import type { LookupSource } from "../../lookup/table.ts";
import { rowMatches, valueKey } from "../../lookup/match.ts";

/** Default of the memory table property `maxBytes`. */
export const MEMORY_TABLE_MAX_BYTES = 64 * 1024 * 1024;

class MemoryTable {
  readonly rows = new Map<string, Obj>();
  /** Estimated bytes of each row, by key. */
  private readonly sizes = new Map<string, number>();
  readonly budget: ByteBudget;
  refs = 0;
  unsubscribe: () => void = () => {};

  constructor(
    readonly topic: string,
    readonly tableKey: string,
    maxBytes: number,
  ) {
    this.budget = new ByteBudget(maxBytes);
  }

  readonly admit = (_topic: string, rows: Rows, kind?: RowKind): boolean => {
    if (Array.isArray(rows)) for (const r of rows) this.apply(r, kind);
    else this.apply(rows, kind);
    return true;
  };

  private apply(row: Obj, kind: RowKind | undefined): void {
    const k = row[kind ? kind.keyField : this.tableKey];
    if (k === undefined || k === null) return;
    const key = valueKey(k);
    const old = this.sizes.get(key);
    if (old !== undefined) this.budget.release(old);
    if (kind && row[kind.rowkindField] === "delete") {
      this.rows.delete(key);
      this.sizes.delete(key);
      return;
    }
    const size = 48 + key.length + estimateBytes(row);
    if (!this.budget.take(size)) {
      // Refused: the key keeps the row it had (if any).
      if (old !== undefined) this.budget.charge(old);
      return;
    }
    this.rows.set(key, row);
    this.sizes.set(key, size);
  }
}

const tables = new WeakMap<MemoryPubSub, Map<string, MemoryTable>>();

export class MemoryLookup implements LookupSource {
  private readonly topic: string;
  private readonly key: string;
  private readonly maxBytes: number;
  private table: MemoryTable | undefined;

  constructor(
    props: Props,
    private readonly pubsub: MemoryPubSub,
  ) {
    const r = new PropReader(props);
    this.topic = r.str("datasource");
    if (!this.topic) throw new EngineError("datasource(topic) is required");
    this.key = r.str("key");
    if (!this.key) throw new EngineError("key is required for lookup source");
    this.maxBytes = r.int("maxBytes", MEMORY_TABLE_MAX_BYTES);
    checkFilter(this.topic);
  }

  open(): void {
    if (this.table) return;
    let byTopic = tables.get(this.pubsub);
    if (!byTopic) tables.set(this.pubsub, (byTopic = new Map()));
    const id = `${this.topic}\u0000${this.key}`;
    let t = byTopic.get(id);
    if (!t) {
      t = new MemoryTable(this.topic, this.key, this.maxBytes);
      t.unsubscribe = this.pubsub.subscribe(this.topic, t.admit, (retry) => retry());
      byTopic.set(id, t);
    }
    t.refs++;
    this.table = t;
  }

  lookup(keys: readonly string[], values: readonly Value[]): Obj[] {
    const t = this.table;
    if (!t) return [];
    if (keys.length === 1 && keys[0] === this.key) {
      const r = t.rows.get(valueKey(values[0]!));
      return r ? [r] : [];
    }
    const out: Obj[] = [];
    for (const r of t.rows.values()) if (rowMatches(r, keys, values)) out.push(r);
    return out;
  }

  close(): void {
    const t = this.table;
    if (!t) return;
    this.table = undefined;
    if (--t.refs > 0) return;
    t.unsubscribe();
    const byTopic = tables.get(this.pubsub);
    const id = `${this.topic}\u0000${this.key}`;
    if (byTopic?.get(id) === t) byTopic.delete(id);
  }
}

/** What the memory tables of `pubsub` hold against their byte budgets (`/metrics`). */
export function memoryTableStats(pubsub: MemoryPubSub): { topic: string; key: string; budget: ByteBudget }[] {
  const out: { topic: string; key: string; budget: ByteBudget }[] = [];
  for (const t of tables.get(pubsub)?.values() ?? []) out.push({ topic: t.topic, key: t.tableKey, budget: t.budget });
  return out;
}
