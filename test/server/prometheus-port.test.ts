/** /metrics on its own port (basic.prometheusPort), and what promtool says of it. */
import { expect, test } from "bun:test";
import { freePort } from "../helpers/mosquitto.ts";
import { startFloe } from "./daemon.ts";

test("with prometheus on, /metrics is served on prometheusPort and not on the REST port", async () => {
  const port = await freePort();
  const d = await startFloe(undefined, { KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: String(port) });
  try {
    const r = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toContain("kuiper_rule_count");
    expect((await d.call("GET", "/metrics")).status).toBe(404);
    expect(d.stderr()).toContain(`Prometheus metrics on http://127.0.0.1:${port}/metrics`);
    expect(await d.stop()).toBe(0);
  } finally {
    await d.stop();
  }
}, 30_000);
