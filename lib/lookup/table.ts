/**
 * The contract of a lookup table's source (sql.md §12.5, rules-and-sinks.md §10.3, §11.9–§11.11):
 * a lookup operator asks it for the rows of the table whose key fields equal the values it
 * evaluated from the current input row. Synchronous kinds (memory, simulator) return rows; remote
 * kinds (redis, httppull) return a promise and the operator keeps its output in input order.
 */
import type { Obj, Value } from "../value/values.ts";

export interface LookupSource {
  open(): Promise<void> | void;
  /** Rows whose fields keys[i] equal values[i] (values already evaluated, none null). */
  lookup(keys: readonly string[], values: readonly Value[]): Obj[] | Promise<Obj[]>;
  close(): Promise<void> | void;
}
