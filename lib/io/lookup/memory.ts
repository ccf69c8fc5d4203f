/**
 * The memory lookup table (rules-and-sinks.md §10.3): a map key value → latest row, fed by every
 * row memory sinks publish on the table's topic (wildcards allowed). Rows of a sink with
 * `rowkindField` are applied by kind (`delete` removes, the others upsert) under the sink's key
 * field; plain rows upsert under the table's KEY. One map per pub/sub, topic and key, shared by
 * every holder: it exists while something holds it open (the daemon from CREATE TABLE to DROP,
 * lib/server/lookup-tables.ts; pipe mode while the run uses it) and starts empty (not persisted).
 */
import { EngineError } from "../../errors.ts";
import type { Obj, Value } from "../../value/values.ts";
import { checkFilter, type MemoryPubSub, type RowKind, type Rows } from "../memory-pubsub.ts";
import { PropReader, type Props } from "../props.ts";
import type { LookupSource } from "./lookup.ts";
import { rowMatches, valueKey } from "./match.ts";

class MemoryTable {
  readonly rows = new Map<string, Obj>();
  refs = 0;
  unsubscribe: () => void = () => {};

  constructor(private readonly key: string) {}

  readonly admit = (_topic: string, rows: Rows, kind?: RowKind): boolean => {
    if (Array.isArray(rows)) for (const r of rows) this.apply(r, kind);
    else this.apply(rows, kind);
    return true;
  };

  private apply(row: Obj, kind: RowKind | undefined): void {
    const k = row[kind ? kind.keyField : this.key];
    if (k === undefined || k === null) return;
    if (kind && row[kind.rowkindField] === "delete") this.rows.delete(valueKey(k));
    else this.rows.set(valueKey(k), row);
  }
}

const tables = new WeakMap<MemoryPubSub, Map<string, MemoryTable>>();

export class MemoryLookup implements LookupSource {
  private readonly topic: string;
  private readonly key: string;
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
    checkFilter(this.topic);
  }

  open(): void {
    if (this.table) return;
    let byTopic = tables.get(this.pubsub);
    if (!byTopic) tables.set(this.pubsub, (byTopic = new Map()));
    const id = `${this.topic}\u0000${this.key}`;
    let t = byTopic.get(id);
    if (!t) {
      t = new MemoryTable(this.key);
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
