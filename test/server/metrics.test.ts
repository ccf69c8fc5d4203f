/** Prometheus exposition on the REST port when `prometheusPort == restPort` (rest-api.md §16.1). */
import { expect, test } from "bun:test";
import { freePort } from "../helpers/mosquitto.ts";
import { startFloe } from "./daemon.ts";

test("/metrics shows rule counts, per-node series of running rules and process gauges", async () => {
  const port = String(await freePort());
  const d = await startFloe(undefined, { KUIPER__BASIC__RESTPORT: port, KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: port });
  await d.call("POST", "/streams", { sql: 'CREATE STREAM m () WITH (DATASOURCE="m", TYPE="memory")' });
  await d.call("POST", "/rules", { id: "pm", sql: "SELECT * FROM m", actions: [{ nop: {} }] });
  await d.call("POST", "/rules", { id: "off", sql: "SELECT * FROM m", actions: [{ nop: {} }], triggered: false });
  // The rule starts asynchronously: read /metrics until it counts it as running.
  let r = await d.call("GET", "/metrics");
  for (let i = 0; i < 500 && !r.text.includes('kuiper_rule_count{status="running"} 1'); i++) r = await Bun.sleep(10).then(() => d.call("GET", "/metrics"));
  expect(r.status).toBe(200);
  expect(r.text).toContain('kuiper_rule_count{status="running"} 1');
  expect(r.text).toContain('kuiper_rule_count{status="stop"} 1');
  expect(r.text).toContain('kuiper_rule_status{rule="pm"} 1');
  expect(r.text).toContain('kuiper_source_records_in_total{rule="pm",type="source",op="m",op_instance="0"} 0');
  expect(r.text).toContain("process_resident_memory_bytes ");
  expect(await d.stop()).toBe(0);
}, 20_000);
