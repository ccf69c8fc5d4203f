/**
 * The simulator lookup (rules-and-sinks.md §11.10): the rows of the `data` prop whose key fields
 * equal the lookup values. Used by trial runs and pipe mode.
 */
import { EngineError } from "../../errors.ts";
import { isObj, type Obj, type Value } from "../../value/values.ts";
import { decodeTupleJson } from "../../formats/json-tuple.ts";
import { PropReader, type Props } from "../../config/props.ts";
import type { LookupSource } from "../../lookup/table.ts";
import { rowMatches } from "../../lookup/match.ts";

export class SimulatorLookup implements LookupSource {
  private readonly rows: Obj[] = [];

  constructor(props: Props) {
    const data = new PropReader(props).raw("data");
    if (data === undefined || data === null) return;
    if (!Array.isArray(data)) throw new EngineError("simulator data should be an array of objects");
    // Props come from JSON.parse (numbers as float64): decode again so integers are int64 like stream rows.
    for (const d of data) {
      const v = decodeTupleJson(JSON.stringify(d));
      if (!isObj(v)) throw new EngineError("simulator data should be an array of objects");
      this.rows.push(v);
    }
  }

  open(): void {}

  lookup(keys: readonly string[], values: readonly Value[]): Obj[] {
    const out: Obj[] = [];
    for (const r of this.rows) if (rowMatches(r, keys, values)) out.push(r);
    return out;
  }

  close(): void {}
}
