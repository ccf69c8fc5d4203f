/**
 * A small version of bench/qos1-burst.ts against the compiled executable: a default-configured
 * mosquitto (`max_queued_messages 1000`, `max_inflight_messages 20`), `floe run` subscribed at
 * QoS 1 with floe's defaults, a burst from `mosquitto_pub -l -q 1`: floe receives every message.
 * Also: a streaming run says on stderr when its source is connected and subscribed, and again
 * after a reconnect.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { burstOnce } from "../../../bench/qos1-burst.ts";
import { Mosquitto } from "../../helpers/mosquitto.ts";
import { waitFor } from "../../helpers/runtime.ts";

const BIN = join(import.meta.dir, "../../../dist/floe");

test("dist/floe exists for the burst tests (run `make build` first)", () => {
  expect(existsSync(BIN)).toBe(true);
});

test("a QoS 1 burst through a default mosquitto arrives whole, twice in a row", async () => {
  for (const run of [1, 2]) {
    const r = await burstOnce(run, { messages: 5000, bin: BIN });
    console.log(`[qos1-burst] run ${run}: floe ${r.floe.received}/5000 (dup ${r.floe.duplicates}), mosquitto_sub ${r.sub?.received}/5000, broker drop logs ${r.broker_drops}`);
    expect(r.floe.lost).toBe(0);
    // The run announced its source before the burst (the warm-up waited for output, not for this line).
    expect(r.floe_stderr).toMatch(/^floe: source s: connected to mqtt:\/\/127\.0\.0\.1:\d+ \(MQTT 5\), subscribed to burst\/in at qos 1$/m);
  }
}, 120_000);

test("a streaming run prints one line when its source is subscribed and one after each reconnect", async () => {
  const broker = await Mosquitto.start();
  const dir = mkdtempSync(join(tmpdir(), "floe-ready-"));
  const rule = join(dir, "rule.sql");
  writeFileSync(rule, 'CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="ready/in", FORMAT="json");\nSELECT * FROM s\n');
  const err = join(dir, "err");
  const p = Bun.spawn([BIN, "run", rule], {
    cwd: dir,
    env: { ...process.env, MQTT_SOURCE__DEFAULT__SERVER: broker.url, MQTT_SOURCE__DEFAULT__PROTOCOLVERSION: "3.1.1" },
    stdout: "ignore",
    stderr: Bun.file(err),
  });
  const text = () => (existsSync(err) ? readFileSync(err, "utf8") : "");
  try {
    await waitFor(() => /connected to/.test(text()), "the connected line");
    expect(text()).toBe(`floe: source s: connected to mqtt://127.0.0.1:${broker.port} (MQTT 3.1.1), subscribed to ready/in at qos 1\n`);
    await broker.stop();
    await broker.restart();
    await waitFor(() => /reconnected/.test(text()), "the reconnected line", 15_000);
    // Between the two, MQTT.js's failed attempts are logged while the broker is down.
    expect(text().split("\n").find((l) => l.includes("reconnected"))).toBe(`floe: source s: reconnected to mqtt://127.0.0.1:${broker.port} (MQTT 3.1.1), subscribed to ready/in at qos 1`);
  } finally {
    p.kill("SIGTERM");
    await p.exited;
    await broker.stop();
  }
}, 30_000);
