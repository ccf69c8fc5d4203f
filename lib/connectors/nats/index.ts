/** NATS: connection properties, a (shared) connection, JetStream pull consumers. */
export { DEFAULT_NATS_SERVER, parseNatsConf, parseServers, type NatsConf } from "./conf.ts";
export { NatsLink } from "./connection.ts";
export { consumerConfig, deleteConsumer, deliverPolicyOf, ensureConsumer, JsDelivery, parseDelivery, PullReader, type ConsumerSpec, type PullHandler, type PullOptions } from "./consumer.ts";
export { AckWindow } from "./ack-window.ts";
