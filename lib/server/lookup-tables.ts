/**
 * The daemon's memory lookup tables (rules-and-sinks.md §10.3): as in eKuiper, each lives from
 * CREATE TABLE (or its restore at start) to DROP TABLE, fed by memory sinks even while no rule
 * uses it. The daemon holds one reference per table; rules share the same map through their own
 * (memory.ts), so rows published before a rule starts are there when it looks them up.
 */
import { errorText } from "../errors.ts";
import { MemoryLookup } from "../connectors/memory/lookup.ts";
import type { MemoryPubSub } from "../connectors/memory/pubsub.ts";
import { sourceType } from "../connectors/sources.ts";
import type { StreamDef } from "../plan/streams.ts";

interface Held {
  /** `topic\0key`: a replace that changes neither keeps the rows. */
  readonly sig: string;
  readonly table: MemoryLookup;
}

function isMemoryLookup(def: StreamDef): boolean {
  return def.kind === "table" && def.options.KIND === "lookup" && sourceType(def, "file") === "memory";
}

export class MemoryTables {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly pubsub: MemoryPubSub,
    private readonly log: (line: string) => void,
  ) {}

  /** Follows a catalog change: opens the table of a new definition, closes a dropped or changed one. */
  update(name: string, def: StreamDef | undefined): void {
    const want = def && isMemoryLookup(def) ? def : undefined;
    const topic = want?.options.DATASOURCE ?? "";
    const key = want?.options.KEY ?? "";
    const sig = `${topic}\u0000${key}`;
    const cur = this.held.get(name);
    if (cur && want && cur.sig === sig) return;
    let next: Held | undefined;
    if (want) {
      try {
        const table = new MemoryLookup({ datasource: topic, key }, this.pubsub);
        table.open();
        next = { sig, table };
      } catch (e) {
        this.log(`cannot open lookup table ${name}: ${errorText(e)}`);
      }
    }
    if (cur) cur.table.close();
    if (next) this.held.set(name, next);
    else this.held.delete(name);
  }

  /** The names of the tables held open (tests, diagnostics). */
  names(): string[] {
    return [...this.held.keys()];
  }

  closeAll(): void {
    for (const h of this.held.values()) h.table.close();
    this.held.clear();
  }
}
