/** A partitioned rule's metrics (server/partitioned-run.ts): its partition runs' nodes added up, node by node. */
import { NodeMetrics } from "../core/metrics.ts";
import type { HeldRun } from "./lifecycle.ts";

/** Several runs' metrics added up node by node (every run has the same plan). */
export function mergeRuns(runs: readonly HeldRun[]): readonly NodeMetrics[] {
  const lists = runs.map((r) => r.nodes());
  if (lists.length === 0) return [];
  // The longest list: partition 0's run of a two-stage rule also holds the merge's nodes.
  const longest = lists.reduce((a, b) => (b.length > a.length ? b : a));
  return longest.map((n, i) => mergeNodes(n.kind, n.name, lists.map((l) => l[i]).filter((x): x is NodeMetrics => x !== undefined)));
}

/** One node's metrics over several runs: counts add up, times and latencies take the latest/largest, a connection the worst. */
export function mergeNodes(kind: NodeMetrics["kind"], name: string, all: readonly NodeMetrics[]): NodeMetrics {
  const m = new NodeMetrics(kind, name);
  let lost = -1;
  for (const n of all) {
    m.recordsIn += n.recordsIn;
    m.recordsOut += n.recordsOut;
    m.messagesProcessed += n.messagesProcessed;
    m.processLatencyUs = Math.max(m.processLatencyUs, n.processLatencyUs);
    m.bufferLength += n.bufferLength;
    m.lastInvocation = Math.max(m.lastInvocation, n.lastInvocation);
    m.exceptions += n.exceptions;
    if (n.lastExceptionTime > m.lastExceptionTime) {
      m.lastExceptionTime = n.lastExceptionTime;
      m.lastException = n.lastException;
    }
    m.lastConnectedTime = Math.max(m.lastConnectedTime, n.lastConnectedTime);
    if (n.lastDisconnectedTime > m.lastDisconnectedTime) {
      m.lastDisconnectedTime = n.lastDisconnectedTime;
      m.lastDisconnectedMessage = n.lastDisconnectedMessage;
    }
    m.lastTryTime = Math.max(m.lastTryTime, n.lastTryTime);
    m.duplicates += n.duplicates;
    if (n.recordsLost >= 0) lost = Math.max(lost, 0) + n.recordsLost;
  }
  m.connectionStatus = all.length ? Math.min(...all.map((n) => n.connectionStatus)) : 0;
  m.recordsLost = lost;
  return m;
}
