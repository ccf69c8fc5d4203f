/**
 * Per-node metrics with eKuiper's keys and order (rest-api.md §6.2). Counters are plain fields
 * on a fixed-shape object: the hot path increments them directly.
 */
import { ErrorGroups } from "./error-groups.ts";

export type NodeKind = "source" | "op" | "sink";

/**
 * What a node seldom has: connection metrics (sources and sinks), its last error, duplicate and
 * loss counts. Made the first time one is set, so an operator's node that never fails is the
 * counters alone (a rule holds several nodes; many idle rules hold many).
 */
class RareMetrics {
  lastException = "";
  lastExceptionTime = 0;
  connectionStatus = 0;
  lastConnectedTime = 0;
  lastDisconnectedTime = 0;
  lastDisconnectedMessage = "";
  lastTryTime = 0;
  duplicates = 0;
  recordsLost = -1;
  errorGroups: ErrorGroups | null = null;
  destinationDuplicates = -1;
}

/**
 * Node names, held once: the rules of one shape name their nodes alike (`3_filter`, `nop_0_1_encode`),
 * each name made anew per rule. Bounded: a process naming nodes without end starts it over.
 */
const names = new Map<string, string>();
const MAX_NAMES = 4096;

function intern(name: string): string {
  const held = names.get(name);
  if (held !== undefined) return held;
  if (names.size >= MAX_NAMES) names.clear();
  names.set(name, name);
  return name;
}

export class NodeMetrics {
  readonly kind: NodeKind;
  readonly name: string;
  recordsIn = 0;
  recordsOut = 0;
  messagesProcessed = 0;
  processLatencyUs = 0;
  bufferLength = 0;
  lastInvocation = 0;
  exceptions = 0;
  /** The fields below, once one is set. */
  private rare: RareMetrics | null = null;

  private get r(): RareMetrics {
    return (this.rare ??= new RareMetrics());
  }

  get lastException(): string {
    return this.rare?.lastException ?? "";
  }
  set lastException(v: string) {
    this.r.lastException = v;
  }
  get lastExceptionTime(): number {
    return this.rare?.lastExceptionTime ?? 0;
  }
  set lastExceptionTime(v: number) {
    this.r.lastExceptionTime = v;
  }
  /** Connection metrics (sources and sinks only). */
  get connectionStatus(): number {
    return this.rare?.connectionStatus ?? 0;
  }
  set connectionStatus(v: number) {
    this.r.connectionStatus = v;
  }
  get lastConnectedTime(): number {
    return this.rare?.lastConnectedTime ?? 0;
  }
  set lastConnectedTime(v: number) {
    this.r.lastConnectedTime = v;
  }
  get lastDisconnectedTime(): number {
    return this.rare?.lastDisconnectedTime ?? 0;
  }
  set lastDisconnectedTime(v: number) {
    this.r.lastDisconnectedTime = v;
  }
  get lastDisconnectedMessage(): string {
    return this.rare?.lastDisconnectedMessage ?? "";
  }
  set lastDisconnectedMessage(v: string) {
    this.r.lastDisconnectedMessage = v;
  }
  get lastTryTime(): number {
    return this.rare?.lastTryTime ?? 0;
  }
  set lastTryTime(v: number) {
    this.r.lastTryTime = v;
  }
  /** floe: redelivered messages a source admitted (MQTT DUP flag); not an eKuiper status key. */
  get duplicates(): number {
    return this.rare?.duplicates ?? 0;
  }
  set duplicates(v: number) {
    this.r.duplicates = v;
  }
  /**
   * floe: messages the source acknowledged that the rule's last run lost (not in a sink cache
   * nor in a checkpoint at a kill or stop), counted at start from the acknowledgement ledger;
   * -1 when the rule keeps no ledger. Reported as `records_lost_total` on source nodes.
   */
  get recordsLost(): number {
    return this.rare?.recordsLost ?? -1;
  }
  set recordsLost(v: number) {
    this.r.recordsLost = v;
  }
  /** floe: the node's errors by message, made at its first error (the console's Debug view). */
  get errorGroups(): ErrorGroups | null {
    return this.rare?.errorGroups ?? null;
  }
  set errorGroups(v: ErrorGroups | null) {
    this.r.errorGroups = v;
  }
  /**
   * floe: publishes the destination reported as duplicates of ones it already stored, and so did
   * not store again (JetStream's PubAck `duplicate`); -1 when the sink cannot tell. Reported as
   * `duplicates_total` on sink nodes.
   */
  get destinationDuplicates(): number {
    return this.rare?.destinationDuplicates ?? -1;
  }
  set destinationDuplicates(v: number) {
    this.r.destinationDuplicates = v;
  }
  constructor(kind: NodeKind, name: string) {
    this.kind = kind;
    this.name = intern(name);
  }

  /** One record passed through at `now`: in, out, processed. */
  passed(now: number): void {
    this.recordsIn++;
    this.recordsOut++;
    this.messagesProcessed++;
    this.lastInvocation = now;
  }

  exception(message: string, at: number): void {
    this.exceptions++;
    const r = this.r;
    r.lastException = message;
    r.lastExceptionTime = at;
    (r.errorGroups ??= new ErrorGroups()).add(message, at);
  }

  /** The record that caused the error just counted (a bounded preview, error-groups.ts). */
  attachPayload(preview: string): void {
    this.errorGroups?.attach(this.lastException, preview);
  }

  /** Metric entries in eKuiper's order, keyed `<kind>_<name>_0_<metric>`. */
  entries(): [string, number | string][] {
    const p = `${this.kind}_${this.name}_0_`;
    const out: [string, number | string][] = [
      [p + "records_in_total", this.recordsIn],
      [p + "records_out_total", this.recordsOut],
      [p + "messages_processed_total", this.messagesProcessed],
      [p + "process_latency_us", this.processLatencyUs],
      [p + "buffer_length", this.bufferLength],
      [p + "last_invocation", this.lastInvocation],
      [p + "exceptions_total", this.exceptions],
      [p + "last_exception", this.lastException],
      [p + "last_exception_time", this.lastExceptionTime],
    ];
    if (this.recordsLost >= 0) out.push([p + "records_lost_total", this.recordsLost]);
    if (this.destinationDuplicates >= 0) out.push([p + "duplicates_total", this.destinationDuplicates]);
    if (this.kind !== "op") {
      out.push(
        [p + "connection_status", this.connectionStatus],
        [p + "connection_last_connected_time", this.lastConnectedTime],
        [p + "connection_last_disconnected_time", this.lastDisconnectedTime],
        [p + "connection_last_disconnected_message", this.lastDisconnectedMessage],
        [p + "connection_last_try_time", this.lastTryTime],
      );
    }
    return out;
  }
}

/** The status object of a rule: state fields, then every node's metrics in topology order. */
export function statusObject(
  state: { status: string; message: string; lastStartTimestamp: number; lastStopTimestamp: number; nextStartTimestamp: number },
  nodes: readonly NodeMetrics[],
): Record<string, number | string> {
  const out: Record<string, number | string> = { ...state };
  for (const n of nodes) for (const [k, v] of n.entries()) out[k] = v;
  return out;
}
