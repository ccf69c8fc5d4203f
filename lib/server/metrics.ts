/**
 * Metrics (rest-api.md §16): the Prometheus text exposition of every rule node's metrics plus
 * rule counts and process gauges, and the metrics-dump routes.
 */
import { ErrCode } from "../errors.ts";
import { RuleStateName } from "./lifecycle.ts";
import { LAG_BUCKETS, loopLag } from "../runtime/loop-lag.ts";
import type { Engine } from "./engine.ts";
import { errorBody, sentence } from "./respond.ts";
import type { RouteDef } from "./router.ts";

function esc(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

/** `# HELP` text of a node family by metric suffix (prefixed with what the node is). */
const NODE_HELP: Record<string, string> = {
  records_in_total: "Total number of records received by the",
  records_out_total: "Total number of records sent by the",
  messages_processed_total: "Total number of messages processed by the",
  exceptions_total: "Total number of exceptions raised by the",
  process_latency_us: "Last processing latency in microseconds of the",
  buffer_length: "Number of records waiting in the buffer of the",
  connection_status: "Connection status (1 connected, 0 connecting, -1 disconnected) of the",
  records_lost_total: "Total number of records dropped by the",
};

const HELP: Record<string, string> = {
  kuiper_rule_status: "Rule status: 1 running, 0 stopped, -1 stopped by error",
  kuiper_rule_count: "Number of rules per state",
  kuiper_conn_status_gauge: "Named connection status: 1 connected, 0 connecting, -1 disconnected",
  process_cpu_seconds_total: "Total user and system CPU time spent in seconds",
  process_resident_memory_bytes: "Resident memory size in bytes",
  process_start_time_seconds: "Start time of the process since unix epoch in seconds",
  floe_source_duplicates_total: "Messages redelivered to the source (MQTT DUP, JetStream redeliveries)",
  floe_rule_window_rows: "Rows the rule's buffered windows hold (rule option windowMaxRows caps them)",
  floe_rule_window_bytes: "Estimated bytes the rule's buffered windows hold (rule option windowMaxBytes caps them)",
  floe_trace_store_bytes: "Estimated bytes of spans the local trace store holds in memory (openTelemetry.localTraceMaxBytes caps them)",
  floe_memory_table_bytes: "Estimated bytes of rows a memory lookup table holds (its maxBytes caps them)",
  floe_memory_table_dropped_rows_total: "Rows refused by a memory lookup table at its maxBytes",
  floe_sse_events_dropped_total: "Events not queued for an SSE client whose queue held its byte budget",
  floe_sink_duplicates_total: "Publishes the destination did not store again as duplicates of stored ones (JetStream Nats-Msg-Id)",
  floe_cluster_entries_refused_total: "Group entries refused: unsigned or tampered definitions, checkpoints and heartbeats, invalid definitions, stale owners' writes",
  floe_cluster_fenced_writes_total: "This member's checkpoint writes refused because a newer owner had claimed the partition",
};

function helpOf(name: string): string {
  const h = HELP[name];
  if (h) return h;
  const m = /^kuiper_(source|op|sink)_(.+)$/.exec(name);
  const kind = m ? (m[1] === "op" ? "operator" : m[1]!) : "";
  const node = m ? NODE_HELP[m[2]!] : undefined;
  return node ? `${node} ${kind} node` : name;
}

/**
 * The exposition text (format 0.0.4): every family with `# HELP` and `# TYPE`, labels in name order
 * as Prometheus' Go client writes them (`{op,op_instance,rule,type}`, eKuiper's).
 */
export function prometheusText(e: Engine): string {
  const fam = new Map<string, { type: string; lines: string[] }>();
  const add = (name: string, type: string, labels: Record<string, string>, v: number) => {
    let f = fam.get(name);
    if (!f) fam.set(name, (f = { type, lines: [] }));
    const l = Object.keys(labels)
      .sort()
      .map((k) => `${k}="${esc(labels[k]!)}"`)
      .join(",");
    f.lines.push(`${name}${l ? `{${l}}` : ""} ${v}`);
  };
  const dups: [Record<string, string>, number][] = [];
  const sinkDups: [Record<string, string>, number][] = [];
  for (const [id, lc] of e.rules.rules) {
    add("kuiper_rule_status", "gauge", { rule: id }, lc.state === RuleStateName.running ? 1 : lc.state === RuleStateName.stoppedByErr ? -1 : 0);
    if (!lc.running) continue;
    for (const n of lc.nodes()) {
      const labels = { op: n.name, op_instance: "0", rule: id, type: n.kind };
      const p = `kuiper_${n.kind}_`;
      add(p + "records_in_total", "counter", labels, n.recordsIn);
      add(p + "records_out_total", "counter", labels, n.recordsOut);
      add(p + "messages_processed_total", "counter", labels, n.messagesProcessed);
      add(p + "exceptions_total", "counter", labels, n.exceptions);
      add(p + "process_latency_us", "gauge", labels, n.processLatencyUs);
      add(p + "buffer_length", "gauge", labels, n.bufferLength);
      if (n.kind !== "op") add(p + "connection_status", "gauge", labels, n.connectionStatus);
      if (n.recordsLost >= 0) add(p + "records_lost_total", "counter", labels, n.recordsLost);
      // floe's own: redelivered MQTT publishes (DUP) the source admitted, also in records_in_total.
      if (n.kind === "source") dups.push([labels, n.duplicates]);
      if (n.destinationDuplicates >= 0) sinkDups.push([labels, n.destinationDuplicates]);
    }
  }
  for (const [labels, v] of dups) add("floe_source_duplicates_total", "counter", labels, v);
  for (const [labels, v] of sinkDups) add("floe_sink_duplicates_total", "counter", labels, v);
  budgetText(e, add);
  for (const [name, v] of e.connections.gauges()) add("kuiper_conn_status_gauge", "gauge", { name }, v);
  const c = e.rules.counts();
  add("kuiper_rule_count", "gauge", { status: "running" }, c.running);
  add("kuiper_rule_count", "gauge", { status: "stop" }, c.stop);
  const cpu = process.cpuUsage();
  add("process_cpu_seconds_total", "counter", {}, (cpu.user + cpu.system) / 1e6);
  add("process_resident_memory_bytes", "gauge", {}, process.memoryUsage.rss());
  add("process_start_time_seconds", "gauge", {}, Math.floor(e.startedAt / 1000));
  if (e.cluster) {
    add("floe_cluster_entries_refused_total", "counter", {}, e.cluster.refusals.count);
    add("floe_cluster_fenced_writes_total", "counter", {}, e.cluster.checkpoints.fencedWrites);
  }
  let out = "";
  for (const [name, f] of fam) out += `# HELP ${name} ${helpOf(name)}\n# TYPE ${name} ${f.type}\n${f.lines.join("\n")}\n`;
  return out + lagText();
}

/** What floe holds in memory on users' behalf, against its byte budgets (docs/memory-budgets.md). */
function budgetText(e: Engine, add: (name: string, type: string, labels: Record<string, string>, v: number) => void): void {
  for (const [id, lc] of e.rules.rules) {
    const w = lc.windowBudget();
    if (!w) continue;
    add("floe_rule_window_rows", "gauge", { rule: id }, w.rows);
    add("floe_rule_window_bytes", "gauge", { rule: id }, w.bytes);
  }
  add("floe_trace_store_bytes", "gauge", {}, e.traces.store.budget.bytes);
  for (const t of e.hooks.memoryTables?.() ?? []) {
    const labels = { key: t.key, topic: t.topic };
    add("floe_memory_table_bytes", "gauge", labels, t.budget.bytes);
    add("floe_memory_table_dropped_rows_total", "counter", labels, t.budget.droppedRows);
  }
  for (const [path, hub] of e.dataServer.sseHubs()) add("floe_sse_events_dropped_total", "counter", { path }, hub.dropped);
}

/**
 * The event-loop lag probe (loop-lag.ts): a cumulative histogram of every tick's lateness (two
 * scrapes diff into the lag over any interval) and the last minute's max / p99 / p99.9 as gauges.
 */
function lagText(): string {
  const l = loopLag;
  let out = "# HELP floe_event_loop_lag_seconds How late a 10 ms timer fired: the time the event loop was busy.\n# TYPE floe_event_loop_lag_seconds histogram\n";
  let cum = 0;
  for (let i = 0; i < LAG_BUCKETS.length; i++) {
    cum += l.counts[i]!;
    out += `floe_event_loop_lag_seconds_bucket{le="${LAG_BUCKETS[i]}"} ${cum}\n`;
  }
  out += `floe_event_loop_lag_seconds_bucket{le="+Inf"} ${l.count}\nfloe_event_loop_lag_seconds_sum ${l.sum}\nfloe_event_loop_lag_seconds_count ${l.count}\n`;
  const s = l.stats();
  // Three gauges rather than one with a quantile label: Prometheus keeps that label for summaries.
  const gauge = (name: string, help: string, ms: number) => `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} ${ms / 1000}\n`;
  out += gauge("floe_event_loop_lag_p99_seconds", "99th percentile of the event-loop lag over the last minute.", s.p99Ms);
  out += gauge("floe_event_loop_lag_p999_seconds", "99.9th percentile of the event-loop lag over the last minute.", s.p999Ms);
  out += gauge("floe_event_loop_lag_max_seconds", "Largest event-loop lag over the last minute.", s.maxMs);
  return out;
}

export function metricsResponse(e: Engine): Response {
  return new Response(prometheusText(e), { status: 200, headers: { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" } });
}

export const metricsDumpRoutes: RouteDef<Engine>[] = [
  { method: "GET", path: "/metrics/dump", handler: (_c, e) => (e.metricsDump ? errorBody(ErrCode.undefined, "not metrics are selected") : errorBody(ErrCode.undefined, "metrics dump not enabled")) },
  { method: "GET", path: "/metrics/dump/check", handler: (_c, e) => sentence(e.metricsDump ? "enabled" : "disabled") },
];
