/**
 * NATS connections (the `nats` source and sink, a floe group): a broker connection, so private
 * addresses are allowed, as for the other brokers (brokers.ts). Its own file so that the NATS
 * client loads with the first NATS stream, action or group only.
 */
import { connect, type ConnectionOptions, type NatsConnection } from "@nats-io/transport-node";

/** Connects to the servers in `options`. */
export function connectNats(options: ConnectionOptions): Promise<NatsConnection> {
  return connect(options);
}
