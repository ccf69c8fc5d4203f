/**
 * MQTT.js clients that open their own transport (TCP, TLS, ws, wss): a broker connection, so
 * private addresses are allowed, as for the other brokers (brokers.ts). Its own file so that
 * MQTT.js loads with the first MQTT connection only.
 */
import { connect, type IClientOptions, type MqttClient } from "mqtt";

/** A client of the broker in `options` (with `manualConnect`, it connects at `client.connect()`). */
export function connectMqtt(options: IClientOptions): MqttClient {
  return connect(options);
}
