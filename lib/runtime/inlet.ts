/**
 * One stream's way into a rule's topology, the one decode → coerce → ingest path of the daemon's
 * executions (drain.ts) and of pipe mode (pipe/direct.ts): a payload goes through the stream's
 * FORMAT decoder; rows that arrive decoded (a tuple source, a replay line's `data`) are coerced to
 * the stream's schema (schema-coerce.ts); each row enters the topology as a Tuple. A record that
 * does not decode is a decode error: counted on the source node (a byte source's: its decoder
 * node) and told to the host's error report; the rule goes on.
 */
import { failureText } from "../errors.ts";
import { Tuple } from "../expr/row.ts";
import type { Obj } from "../value/values.ts";
import type { Decoder } from "../formats/decode.ts";
import type { StreamField } from "../sql/ast.ts";
import { coerceToSchema } from "./schema-coerce.ts";
import type { ErrorReport } from "./error-report.ts";
import type { Topology } from "./topology.ts";

export class Inlet {
  constructor(
    private readonly topo: Topology,
    /** The stream, as the topology names its source. */
    readonly name: string,
    /** The stream's schema (null: schemaless). */
    private readonly fields: StreamField[] | null,
    /**
     * A record of several rows counts once on the source node (a table's batch, eKuiper's scan
     * tables; a pipe-mode line holding an array); otherwise each row counts.
     */
    private readonly perBatch: boolean,
    /** The host's error report (pipe mode's stderr; none in the daemon). */
    private readonly errors: ErrorReport | undefined,
    /** Where the record being processed was read (`line 3`): asked only to report its error. */
    private readonly where: () => string,
  ) {}

  /** The row (or rows) `dec` decodes from `payload`, or undefined: the record's decode error, counted and reported. */
  decode(dec: Decoder, payload: Uint8Array): Obj | Obj[] | undefined {
    try {
      return dec(payload);
    } catch (e) {
      // Any decoder failure is a decode error of this record (counted; the rule goes on).
      this.reject(failureText(e), payload);
      return undefined;
    }
  }

  /** The record being processed did not decode (`text` says why): counted on the source (or its decoder node, with `payload`), reported. */
  reject(text: string, payload?: Uint8Array): void {
    this.topo.sourceError(this.name, text, payload);
    this.errors?.decode(this.where(), text);
  }

  /**
   * Ingests one record's rows at `now`. `decoded`: the stream reads through its decoder, which
   * applied the schema itself; otherwise each row is coerced to the schema first.
   */
  ingest(rows: Obj | Obj[], meta: Obj | null, now: number, decoded: boolean): void {
    const topo = this.topo;
    const name = this.name;
    const fields = decoded ? null : this.fields;
    if (!Array.isArray(rows)) {
      topo.ingest(name, new Tuple(fields ? coerceToSchema(rows, fields) : rows, meta, now, name));
      return;
    }
    const perBatch = this.perBatch;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      topo.ingest(name, new Tuple(fields ? coerceToSchema(r, fields) : r, meta, now, name), 1, !perBatch || i === 0);
    }
  }
}
