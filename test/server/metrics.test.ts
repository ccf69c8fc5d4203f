/** Prometheus exposition on the REST port when `prometheusPort == restPort` (rest-api.md §16.1). */
import { expect, test } from "bun:test";
import { freePort } from "../helpers/mosquitto.ts";
import { waitForValue } from "../helpers/wait.ts";
import { startFloe } from "./daemon.ts";

test("/metrics shows rule counts, per-node series of running rules and process gauges", async () => {
  const port = String(await freePort());
  const d = await startFloe(undefined, { KUIPER__BASIC__RESTPORT: port, KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: port });
  try {
    await d.call("POST", "/streams", { sql: 'CREATE STREAM m () WITH (DATASOURCE="m", TYPE="memory")' });
    await d.call("POST", "/rules", { id: "pm", sql: "SELECT * FROM m", actions: [{ nop: {} }] });
    await d.call("POST", "/rules", { id: "off", sql: "SELECT * FROM m", actions: [{ nop: {} }], triggered: false });
    // The rule starts asynchronously: read /metrics until it counts it as running.
    const r = await waitForValue(async () => {
      const m = await d.call("GET", "/metrics");
      return m.text.includes('kuiper_rule_count{status="running"} 1') ? m : undefined;
    }, "the running rule in /metrics", 10_000, 10);
    expect(r.status).toBe(200);
    expect(r.text).toContain('kuiper_rule_count{status="running"} 1');
    expect(r.text).toContain('kuiper_rule_count{status="stop"} 1');
    expect(r.text).toContain('kuiper_rule_status{rule="pm"} 1');
    // eKuiper's label order (Prometheus' Go client sorts label names).
    expect(r.text).toContain('kuiper_source_records_in_total{op="m",op_instance="0",rule="pm",type="source"} 0');
    expect(r.text).toContain('kuiper_op_records_out_total{op="2_project",op_instance="0",rule="pm",type="op"} 0');
    expect(r.text).toContain("process_resident_memory_bytes ");
    // Every family has its # HELP and # TYPE lines, right before its samples.
    // (A histogram's samples are its family name plus _bucket, _sum and _count.)
    const histograms = new Set([...r.text.matchAll(/^# TYPE (\w+) histogram$/gm)].map((m) => m[1]!));
    const familyOf = (name: string) => {
      const base = name.replace(/_(bucket|sum|count)$/, "");
      return histograms.has(base) ? base : name;
    };
    const families = new Set(r.text.split("\n").filter((l) => l && !l.startsWith("#")).map((l) => familyOf(/^\w+/.exec(l)![0])));
    expect(families.size).toBeGreaterThan(10);
    for (const f of families) {
      expect(r.text).toMatch(new RegExp(`# HELP ${f} [^\n]+\n# TYPE ${f} (counter|gauge|histogram)\n${f}[{_ ]`));
      expect(r.text).not.toContain(`# HELP ${f} ${f}\n`);
    }
    expect(r.text).toContain("# HELP kuiper_source_records_in_total Total number of records received by the source node\n");
    // Prometheus' own parser and linter accept the text. The only findings left are about names eKuiper
    // chose (`*_process_latency_us`, `kuiper_rule_count`): they are the interface, and eKuiper's own
    // /metrics gets the same ones. A parse error or a missing HELP would be another line.
    const promtool = Bun.which("promtool");
    if (!promtool) throw new Error("promtool not found: install the Debian package `prometheus` (apt-get install -y prometheus)");
    const p = Bun.spawnSync([promtool, "check", "metrics"], { stdin: Buffer.from(r.text) });
    const findings = (p.stdout.toString() + p.stderr.toString()).split("\n").filter((l) => l !== "");
    const ekuiperNames = [
      "kuiper_op_process_latency_us metric names should not contain abbreviated units",
      "kuiper_rule_count non-histogram and non-summary metrics should not have \"_count\" suffix",
      "kuiper_sink_process_latency_us metric names should not contain abbreviated units",
      "kuiper_source_process_latency_us metric names should not contain abbreviated units",
    ];
    expect(findings.filter((l) => !ekuiperNames.includes(l))).toEqual([]);
    expect(findings.length).toBe(ekuiperNames.length);
    // exit 3 is promtool's "lint problems"; 1 would be a parse failure.
    expect(p.exitCode).toBe(3);
    expect(await d.stop()).toBe(0);
  } finally {
    await d.stop();
  }
}, 20_000);
