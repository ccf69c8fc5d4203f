/**
 * `floe run` over real connectors (pipe-mode.md): an MQTT stream printed to stdout until SIGINT,
 * which flushes open windows and exits 0; a `.json` rule's actions run as well as stdout; the
 * bundled `rules/mqtt-hot.sql` against a broker of the test's own.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectAsync } from "mqtt";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { waitFor } from "../helpers/runtime.ts";

const root = join(import.meta.dir, "../..");
const dir = mkdtempSync(join(tmpdir(), "floe-pipe-live-"));
let broker: Mosquitto;

beforeAll(async () => {
  broker = await Mosquitto.start();
});
afterAll(async () => {
  await broker.stop();
});

function floe(args: string[], env: Record<string, string> = {}) {
  return Bun.spawn([process.execPath, join(root, "cli.ts"), "run", ...args], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

async function text(s: ReadableStream<Uint8Array> | number | undefined): Promise<string> {
  return s instanceof ReadableStream ? new Response(s).text() : "";
}

test("an MQTT stream is printed to stdout; SIGINT flushes the open window and exits 0", async () => {
  const rule = join(dir, "live.sql");
  writeFileSync(
    rule,
    `CREATE STREAM telem () WITH (TYPE="mqtt", DATASOURCE="live/+", CONF_KEY="bench");
     SELECT count(*) AS c, max(temp) AS hottest FROM telem WHERE temp > 21 GROUP BY TUMBLINGWINDOW(ss, 3600)`,
  );
  const status = join(dir, "status.json");
  const p = floe([rule, "--status", status], { MQTT_SOURCE__BENCH__SERVER: broker.url, MQTT_SOURCE__BENCH__QOS: "1" });
  const pub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
  // The run says on stderr when its source is subscribed.
  let err = "";
  const errPump = (async () => {
    for await (const c of p.stderr as ReadableStream<Uint8Array>) err += new TextDecoder().decode(c);
  })();
  await waitFor(() => err.includes("subscribed"), "the source to subscribe");
  // The run acknowledges a QoS 1 message once admitted (the window emits only at SIGINT, --status is
  // written at exit): the broker's log counts the acknowledgements (only the run subscribes here).
  const acks = () => broker.log().split("Received PUBACK from ").length - 1;
  const acked = acks();
  for (let i = 0; i < 20; i++) await pub.publishAsync(`live/d${i % 3}`, JSON.stringify({ temp: 15 + i }), { qos: 1 });
  await waitFor(() => acks() - acked === 20, () => `the run to acknowledge 20 messages (${acks() - acked})`);
  p.kill("SIGINT");
  const [out, code] = await Promise.all([text(p.stdout), p.exited]);
  await errPump;
  expect(err).toBe(`floe: source telem: connected to mqtt://127.0.0.1:${broker.port} (MQTT 5), subscribed to live/+ at qos 1\n`);
  expect(code).toBe(0);
  expect(out).toBe('{"c":13,"hottest":34}\n');
  const st = JSON.parse(await Bun.file(status).text()) as Record<string, unknown>;
  expect(st.status).toBe("stopped");
  expect(st.message).toBe("canceled manually");
  expect(st.source_telem_0_records_in_total).toBe(20);
  expect(st.op_2_decoder_0_records_out_total).toBe(20);
  expect(st.sink_stdout_0_0_records_out_total).toBe(1);
  await pub.endAsync();
}, 20_000);

test("a .json rule runs its actions as well as stdout, and ends at the end of its input", async () => {
  const sub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
  const got: string[] = [];
  sub.on("message", (_t, m) => got.push(m.toString()));
  await sub.subscribeAsync("piped/out", { qos: 1 });
  const rule = join(dir, "rule.json");
  writeFileSync(rule, JSON.stringify({ id: "piped", sql: "SELECT a * 2 AS b FROM s", actions: [{ mqtt: { server: broker.url, topic: "piped/out", qos: 1, sendSingle: true } }] }));
  const input = join(dir, "in.jsonl");
  writeFileSync(input, '{"a":1}\n{"a":2}\nnot json\n{"a":3}\n');
  const p = floe([rule, "--input", input, "--status", join(dir, "st2.json")]);
  const [out, err, code] = await Promise.all([text(p.stdout), text(p.stderr), p.exited]);
  expect(code).toBe(0);
  expect(out).toBe('{"b":2}\n{"b":4}\n{"b":6}\n');
  expect(err).toContain("line 3:");
  expect(err).toContain("1 record(s) lost or rejected");
  await waitFor(() => got.length === 3, "three MQTT messages");
  expect(got).toEqual(['{"b":2}', '{"b":4}', '{"b":6}']);
  const st = JSON.parse(await Bun.file(join(dir, "st2.json")).text()) as Record<string, unknown>;
  expect(st.message).toBe("done");
  expect(st.sink_stdout_0_0_records_out_total).toBe(3);
  expect(st.sink_mqtt_1_0_records_out_total).toBe(3);
  await sub.endAsync();
}, 20_000);

test("the bundled rules/mqtt-hot.sql prints hot readings from a live broker; Ctrl-C exits 0", async () => {
  const p = floe([join(root, "rules", "mqtt-hot.sql")], { MQTT_SOURCE__DEFAULT__SERVER: broker.url });
  const pub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
  const reader = (p.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      out += new TextDecoder().decode(value);
    }
  })();
  // The subscription is asynchronous: probe until the rule answers, then send the readings.
  await waitFor(() => {
    void pub.publishAsync("sensors/probe/telemetry", JSON.stringify({ device: "probe", temperature: 30 }), { qos: 1 });
    return out.includes('"device":"probe"');
  }, "the rule to subscribe");
  const readings = [
    ["d1", 31.5, 40],
    ["d2", 20.0, 55],
    ["d1", 25.5, 41],
  ] as const;
  for (const [device, temperature, humidity] of readings) {
    await pub.publishAsync(`sensors/${device}/telemetry`, JSON.stringify({ device, temperature, humidity, ts: 1 }), { qos: 1 });
  }
  await pub.publishAsync("sensors/d3/other", JSON.stringify({ device: "d3", temperature: 90 }), { qos: 1 });
  await waitFor(() => out.includes('"device":"d1","humidity":41'), "the readings");
  // A fixed wait, to show that the reading on another topic does not come out.
  await Bun.sleep(100);
  p.kill("SIGINT");
  const [err, code] = await Promise.all([text(p.stderr), p.exited]);
  await pump;
  expect(err).toBe(`floe: source sensors: connected to mqtt://127.0.0.1:${broker.port} (MQTT 5), subscribed to sensors/+/telemetry at qos 1\n`);
  expect(code).toBe(0);
  const lines = out.trim().split("\n").filter((l) => !l.includes('"probe"'));
  expect(lines).toEqual([
    '{"device":"d1","humidity":40,"temp_f":88.7,"topic":"sensors/d1/telemetry"}',
    '{"device":"d1","humidity":41,"temp_f":77.9,"topic":"sensors/d1/telemetry"}',
  ]);
  await pub.endAsync();
}, 20_000);
