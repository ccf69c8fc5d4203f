/** MQTT: the source, the sink, named connections (a shared client) and the connectivity check. */
import type { ConnectorSpec, Ping } from "../spec.ts";
import { parseMqttConf } from "./conf.ts";
import type { SharedMqtt } from "./shared.ts";

const MQTT_VERSIONS = ["3.1", "3.1.1", "4", "5"];

/** The `default` confKey eKuiper ships in `etc/mqtt_source.yaml`. */
const SHIPPED_DEFAULT = { qos: 1, server: "tcp://127.0.0.1:1883", protocolVersion: "3.1.1", insecureSkipVerify: false };

const ping: Ping = (props) => (require("./ping.ts") as typeof import("./ping.ts")).pingMqtt(props);

export const mqttSpec: ConnectorSpec = {
  tech: "mqtt",
  sources: {
    mqtt: {
      create: (props, env) => {
        const { MqttSource } = require("./source.ts") as typeof import("./source.ts");
        return new MqttSource(props, { base: env.baseDir, reader: env.mqttReader, connections: env.connections });
      },
      remote: true,
      ping,
      connectionProps: ["server", "protocolVersion", "insecureSkipVerify"],
    },
  },
  sinks: {
    mqtt: {
      create: (props, env) => {
        const { MqttSink } = require("./sink.ts") as typeof import("./sink.ts");
        return new MqttSink(props, env.connections);
      },
      remote: true,
      ping,
      props: { server: "tcp://127.0.0.1:1883", topic: "", qos: 0, retained: false, clientId: "", username: "", password: "", protocolVersion: "3.1.1" },
    },
  },
  connections: {
    mqtt: {
      props: SHIPPED_DEFAULT,
      validate: (props) => {
        if (typeof props.server !== "string" || props.server === "") return "missing server property";
        if (props.protocolVersion !== undefined && !MQTT_VERSIONS.includes(String(props.protocolVersion))) return `unsupported protocol version ${String(props.protocolVersion)}`;
        return undefined;
      },
      open: (id, props, env) => {
        const conf = parseMqttConf(props, { base: env.base, defaultClientId: `floe-conn-${id}` });
        // The MQTT client loads with the first MQTT connection, not with the daemon (memory).
        const { SharedMqtt } = require("./shared.ts") as typeof import("./shared.ts");
        let mqtt: SharedMqtt | undefined = undefined;
        mqtt = new SharedMqtt(
          conf,
          (line, level) => {
            // The connection's state shows the client's last error, not the log line around it.
            const err = mqtt?.conn.lastError;
            if (level === "warn" && err) env.setErr(err);
            env.log(line, level);
          },
          env.reader,
        );
        return mqtt;
      },
    },
  },
  confKeys: { mqtt: { default: SHIPPED_DEFAULT } },
  /**
   * MQTT v5: the broker then honours the client's Receive Maximum instead of its own inflight
   * window (mosquitto: 20), so a subscriber that falls behind for a moment holds the burst in
   * flight instead of overflowing the broker's queue (`max_queued_messages`, 1000 by default) —
   * docs/connectors.md, "MQTT and the broker's limits".
   */
  floeConfKeys: { mqtt: { default: { protocolVersion: "5" } } },
};

