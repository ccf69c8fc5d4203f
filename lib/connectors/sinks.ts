/**
 * Sink connectors by action type (rules-and-sinks.md §1.2): `sink <type> is not defined` for any
 * other. Connector properties are validated first, then the common ones.
 */
import { EngineError } from "../errors.ts";
import type { ConnectionRegistry } from "./connections.ts";
import type { DataServer } from "./http/server.ts";
import type { MemoryPubSub } from "./memory/pubsub.ts";
import type { NetGuard } from "../net/guard.ts";
import type { Props } from "../config/props.ts";
import type { SinkConnector } from "../sink/connector.ts";
import { LogSink, LogToMemorySink, NopSink, StdoutConnector } from "./log/sink.ts";

export interface SinkEnv {
  readonly pubsub: MemoryPubSub;
  readonly connections?: ConnectionRegistry;
  /** websocket and sse server endpoints. */
  readonly dataServer?: DataServer;
  /** The owner's outbound client (`basic.enablePrivateNet`) for the REST sink and websocket clients. */
  readonly outbound: NetGuard;
}

type SinkFactory = (props: Props, env: SinkEnv) => SinkConnector;

/**
 * The connectors by action type, in the order `GET /metadata/sinks` lists them. Each connector's
 * module (and the client library behind it) loads with the first action of its type, so that
 * pipe mode and an idle daemon do not carry the ones they never use (start-up time and memory).
 */
const SINKS = {
  file: (props) => {
    const { FileSink } = require("./file/sink.ts") as typeof import("./file/sink.ts");
    return new FileSink(props);
  },
  log: () => new LogSink(),
  logToMemory: () => new LogToMemorySink(),
  memory: (props, env) => {
    const { MemorySink } = require("./memory/sink.ts") as typeof import("./memory/sink.ts");
    return new MemorySink(props, env.pubsub);
  },
  mqtt: (props, env) => {
    const { MqttSink } = require("./mqtt/sink.ts") as typeof import("./mqtt/sink.ts");
    return new MqttSink(props, env.connections);
  },
  nats: (props, env) => {
    const { NatsSink } = require("./nats/sink.ts") as typeof import("./nats/sink.ts");
    return new NatsSink(props, env.connections);
  },
  nop: (props) => new NopSink(props),
  redis: (props) => {
    const { RedisSink } = require("./redis/sink.ts") as typeof import("./redis/sink.ts");
    return new RedisSink(props);
  },
  redisPub: (props) => {
    const { RedisPubSink } = require("./redis/pub-sink.ts") as typeof import("./redis/pub-sink.ts");
    return new RedisPubSink(props);
  },
  rest: (props, env) => {
    const { RestSink } = require("./http/sink.ts") as typeof import("./http/sink.ts");
    return new RestSink(props, env.outbound);
  },
  sql: (props) => {
    const { SqlSink } = require("./sql/sink.ts") as typeof import("./sql/sink.ts");
    return new SqlSink(props);
  },
  sse: (props, env) => {
    const { SseSink } = require("./sse/sink.ts") as typeof import("./sse/sink.ts");
    return new SseSink(props, env.dataServer);
  },
  stdout: () => new StdoutConnector(),
  websocket: (props, env) => {
    const { WebSocketSink } = require("./websocket/sink.ts") as typeof import("./websocket/sink.ts");
    return new WebSocketSink(props, env.dataServer, env.outbound);
  },
} satisfies Record<string, SinkFactory>;

export type SinkType = keyof typeof SINKS;

export const SINK_TYPES = Object.keys(SINKS) as SinkType[];

/** A connector of `type`; `sink <type> is not defined` for any other. Connector properties are validated first. */
export function createSinkConnector(type: string, props: Props, env: SinkEnv): SinkConnector {
  if (!Object.hasOwn(SINKS, type)) throw new EngineError(`sink ${type} is not defined`);
  return SINKS[type as SinkType](props, env);
}
