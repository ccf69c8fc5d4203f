import { expect, test } from "bun:test";
import { join } from "node:path";
import { parseMqttConf } from "../../../lib/connectors/mqtt/conf.ts";

test("MQTT v5 asks for a Receive Maximum of 65535 unless receiveMaximum says otherwise", () => {
  expect(parseMqttConf({ server: "tcp://b:1883", protocolVersion: "5" }).options.properties).toEqual({ receiveMaximum: 65535 });
  expect(parseMqttConf({ server: "tcp://b:1883", protocolVersion: 5, receiveMaximum: 20 }).options.properties).toEqual({ receiveMaximum: 20 });
  expect(parseMqttConf({ server: "tcp://b:1883", protocolVersion: "5", enableClientSession: true }).options.properties).toEqual({ receiveMaximum: 65535, sessionExpiryInterval: 60 });
  expect(() => parseMqttConf({ server: "tcp://b:1883", protocolVersion: "5", receiveMaximum: 0 })).toThrow("invalid receiveMaximum 0, the value could be only int 1 to 65535");
  expect(() => parseMqttConf({ server: "tcp://b:1883", protocolVersion: "5", receiveMaximum: 65536 })).toThrow("invalid receiveMaximum 65536, the value could be only int 1 to 65535");
});

test("MQTT 3.1.1 sends no v5 properties; a persistent session is clean=false with the given client id", () => {
  const c = parseMqttConf({ server: "tcp://b:1883", protocolVersion: "3.1.1", enableClientSession: true, clientid: "fixed" });
  expect(c.options.properties).toBeUndefined();
  expect([c.protocolVersion, c.clean, c.clientId, c.options.clean]).toEqual([4, false, "fixed", false]);
});

test("a connection leaves MQTT.js's 65,536-Buffer packet-id cache unbuilt (memory)", () => {
  // In a process of its own: the cache is a module global of mqtt-packet, built at its first write.
  const script = `
    const { MqttClient } = require("mqtt");
    const { Duplex } = require("node:stream");
    const { parseMqttConf } = require(${JSON.stringify(join(import.meta.dir, "../../../lib/connectors/mqtt/conf.ts"))});
    const conf = parseMqttConf({ server: "tcp://127.0.0.1:1883" });
    let wrote = 0;
    const stream = new Duplex({ read() {}, write(chunk, _e, cb) { wrote += chunk.length; cb(); } });
    const client = new MqttClient(() => stream, { ...conf.options, manualConnect: true });
    client.connect();
    // Polls for the CONNECT packet's write (at most 5 s), then reports.
    const t0 = Date.now();
    setInterval(() => {
      if (wrote === 0 && Date.now() - t0 < 5000) return;
      console.log(JSON.stringify({ wrote: wrote > 0, cached: Object.keys(require("mqtt-packet/numbers").cache).length }));
      process.exit(0);
    }, 5);`;
  const p = Bun.spawnSync([process.execPath, "-e", script]);
  expect(p.stderr.toString()).toBe("");
  expect(JSON.parse(p.stdout.toString())).toEqual({ wrote: true, cached: 0 });
});
