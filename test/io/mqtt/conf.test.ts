import { expect, test } from "bun:test";
import { parseMqttConf } from "../../../lib/io/mqtt/conf.ts";

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
