/**
 * The error report a host may give a rule run (rate-limited-errors.ts: pipe mode's stderr, the
 * daemon's log): the run tells it about records that did not decode, records an operator failed
 * on, and the failure that stopped the rule. Every error is also counted in the metrics.
 */
import type { Value } from "../value/values.ts";
import type { SourceMessage } from "../source/message.ts";
import { LineMessage } from "../connectors/stdio/stdin.ts";

export interface ErrorReport {
  /** A record that did not decode; `where` locates it (`line 3`), or is empty. */
  decode(where: string, message: string): void;
  /** An operator failed on a record; `where` locates the record being processed, or is empty. */
  row(where: string, message: string): void;
  /** The rule stopped by error. */
  fatal(message: string): void;
  /** Whether the report names MQTT topics (the run then keeps every record's metadata). */
  readonly wantsMeta?: boolean;
}

/**
 * Where a streaming run's record came from: `line 12` for stdin, else `source demo`, with the
 * MQTT topic when the metadata has one.
 */
export function messageWhere(stream: string, m: SourceMessage): string {
  if (m instanceof LineMessage) return `line ${m.line}`;
  const meta: { readonly [k: string]: Value } | null = m.meta;
  const topic = meta?.topic;
  return typeof topic === "string" ? `source ${stream}, topic ${topic}` : `source ${stream}`;
}
