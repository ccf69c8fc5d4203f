/** eKuiper's env overrides and kuiper.yaml loading (config-and-cli.md §2, §5). */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyEnv, loadKuiperConfig, typeEnvValue } from "../../lib/config/index.ts";
import { loadSourceYaml } from "../../lib/connectors/conf-files.ts";

test.each([
  ["9082", 9082],
  ["true", true],
  ["T", true],
  ["1", 1],
  ["1.5", 1.5],
  ["3.1.1", "3.1.1"],
  ["[a, 2,true]", ["a", " 2", true]],
  ["[1,2]", [1, 2]],
  ["  x  ", "x"],
])("%p is typed as %p", (raw, want) => {
  expect(typeEnvValue(raw)).toEqual(want);
});

test("PREFIX__A__B sets a.b, creates maps, keeps single underscores, skips values with =", () => {
  const doc = applyEnv({ basic: { restport: 9081 } }, "KUIPER", {
    KUIPER__BASIC__RESTPORT: "9082",
    KUIPER__RULE__BUFFERLENGTH: "2048",
    KUIPER__BASIC__X: "a=b",
    MQTT_SOURCE__DEMO_CONF__SERVER: "tcp://x:1883",
  });
  expect(doc).toEqual({ basic: { restport: 9082 }, rule: { bufferlength: 2048 } });
});

test("kuiper.yaml: keys case-insensitive, env wins, secure defaults", async () => {
  const etc = mkdtempSync(join(tmpdir(), "floe-etc-"));
  writeFileSync(join(etc, "kuiper.yaml"), "basic:\n  restPort: 9090\n  RULEPATROLINTERVAL: 30s\nrule:\n  bufferLength: 512\n");
  const c = await loadKuiperConfig(etc, { KUIPER__BASIC__RESTPORT: "9091" });
  expect([c.basic.restPort, c.basic.restIp, c.basic.rulePatrolIntervalMs, c.rule.bufferLength]).toEqual([9091, "127.0.0.1", 30000, 512]);
  const d = await loadKuiperConfig(undefined, {});
  expect([d.basic.restPort, d.basic.port, d.basic.gracefulShutdownTimeoutMs, d.basic.authentication]).toEqual([9081, 20498, 3000, false]);
});

test("UDF sandbox limits: basic.udfTimeout (duration) and basic.udfMemoryLimit (bytes), defaults 100ms and 32 MiB", async () => {
  expect((await loadKuiperConfig(undefined, {})).basic.udfLimits).toEqual({ timeoutMs: 100, memoryBytes: 33554432 });
  const etc = mkdtempSync(join(tmpdir(), "floe-etc-"));
  writeFileSync(join(etc, "kuiper.yaml"), "basic:\n  udfTimeout: 250ms\n  udfMemoryLimit: 67108864\n");
  expect((await loadKuiperConfig(etc, {})).basic.udfLimits).toEqual({ timeoutMs: 250, memoryBytes: 67108864 });
  const env = await loadKuiperConfig(etc, { KUIPER__BASIC__UDFTIMEOUT: "1s", KUIPER__BASIC__UDFMEMORYLIMIT: "16777216" });
  expect(env.basic.udfLimits).toEqual({ timeoutMs: 1000, memoryBytes: 16777216 });
  const bad = await loadKuiperConfig(undefined, { KUIPER__BASIC__UDFTIMEOUT: "-5s", KUIPER__BASIC__UDFMEMORYLIMIT: "0" });
  expect(bad.basic.udfLimits).toEqual({ timeoutMs: 100, memoryBytes: 33554432 });
});

test("origin policy: basic.allowedOrigins / allowedHosts as a YAML list or a comma-separated env value, default none", async () => {
  const none = (await loadKuiperConfig(undefined, {})).basic;
  expect([none.allowedOrigins, none.allowedHosts]).toEqual([[], []]);
  const etc = mkdtempSync(join(tmpdir(), "floe-etc-"));
  writeFileSync(join(etc, "kuiper.yaml"), "basic:\n  allowedOrigins:\n    - https://dash.example\n    - http://10.0.0.5:3000\n  allowedHosts: floe.lan\n");
  const y = (await loadKuiperConfig(etc, {})).basic;
  expect([y.allowedOrigins, y.allowedHosts]).toEqual([["https://dash.example", "http://10.0.0.5:3000"], ["floe.lan"]]);
  const e = (await loadKuiperConfig(etc, { KUIPER__BASIC__ALLOWEDORIGINS: "https://a.example, https://b.example", KUIPER__BASIC__ALLOWEDHOSTS: "[x.lan,y.lan]" })).basic;
  expect([e.allowedOrigins, e.allowedHosts]).toEqual([["https://a.example", "https://b.example"], ["x.lan", "y.lan"]]);
  expect((await loadKuiperConfig(undefined, { KUIPER__BASIC__ALLOWEDORIGINS: "*" })).basic.allowedOrigins).toEqual(["*"]);
});

test("source yaml: shipped defaults without etc (MQTT v5: floe's default), confKeys lower-cased, env adds keys", async () => {
  const y = await loadSourceYaml(undefined, "mqtt", { MQTT_SOURCE__NEWCONF__QOS: "0", MQTT_SOURCE__DEFAULT__SERVER: "tcp://b:1883" });
  expect(y!.default).toEqual({ qos: 1, server: "tcp://b:1883", protocolVersion: "5", insecureSkipVerify: false });
  expect(y!.newconf).toEqual({ qos: 0 });
  // A user's setting wins over floe's default.
  const v4 = await loadSourceYaml(undefined, "mqtt", { MQTT_SOURCE__DEFAULT__PROTOCOLVERSION: "3.1.1" });
  expect(v4!.default!).toMatchObject({ protocolVersion: "3.1.1" });
  const etc = mkdtempSync(join(tmpdir(), "floe-etc-"));
  writeFileSync(join(etc, "mqtt_source.yaml"), 'default:\n  qos: 1\n  protocolVersion: "3.1.1"\n');
  expect((await loadSourceYaml(etc, "mqtt", {}))!.default).toEqual({ qos: 1, protocolVersion: "3.1.1" });
});
