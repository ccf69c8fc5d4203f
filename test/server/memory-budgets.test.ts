/**
 * The byte budgets as the daemon shows them: a rule whose window is over its row cap keeps running,
 * its status names the cap and counts the dropped rows, and /metrics carries the held rows and
 * bytes, the dropped rows and the trace store's bytes.
 */
import { expect, test } from "bun:test";
import { freePort } from "../helpers/mosquitto.ts";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe } from "./daemon.ts";

test("COUNTWINDOW(100000000) over windowMaxRows in the daemon: status error and counted drop, the rule runs on, /metrics shows it", async () => {
  const port = String(await freePort());
  const dataPort = await freePort();
  const d = await startFloe(undefined, { KUIPER__BASIC__RESTPORT: port, KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: port, KUIPER__SOURCE__HTTPSERVERPORT: String(dataPort) });
  try {
    expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM inbox () WITH (TYPE="httppush", DATASOURCE="/inbox", FORMAT="json")' })).status).toBe(201);
    const rule = { id: "huge", sql: "SELECT * FROM inbox GROUP BY COUNTWINDOW(100000000)", actions: [{ nop: {} }], options: { windowMaxRows: 20 } };
    expect((await d.call("POST", "/rules", rule)).status).toBe(201);
    const status = async () => JSON.parse((await d.call("GET", "/rules/huge/status")).text) as Record<string, unknown>;
    await waitFor(async () => (await status()).source_inbox_0_connection_status === 1, "the httppush endpoint");
    for (let n = 0; n < 50; n++) expect((await fetch(`http://127.0.0.1:${dataPort}/inbox`, { method: "POST", body: JSON.stringify({ n }) })).status).toBe(200);
    // Node 2 is the decoder of the bytes source, the window node 3.
    await waitFor(async () => (await status()).op_3_window_0_records_in_total === 50, "50 rows in the window");
    const st = await status();
    expect(st.status).toBe("running");
    expect(st.op_3_window_0_records_lost_total).toBe(30);
    expect(st.op_3_window_0_last_exception).toBe("the rule's windows hold their cap of 20 rows (rule option windowMaxRows): row dropped");
    const m = (await d.call("GET", "/metrics")).text;
    expect(m).toContain('floe_rule_window_rows{rule="huge"} 20\n');
    expect(m).toMatch(/floe_rule_window_bytes\{rule="huge"\} \d+\n/);
    expect(m).toContain('kuiper_op_records_lost_total{op="3_window",op_instance="0",rule="huge",type="op"} 30\n');
    expect(m).toContain("floe_trace_store_bytes 0\n");
  } finally {
    await d.stop();
  }
}, 30_000);
