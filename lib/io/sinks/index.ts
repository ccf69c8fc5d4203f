/**
 * Sink connectors by action type (rules-and-sinks.md §1.2): `sink <type> is not defined` for any
 * other. Connector properties are validated first, then the common ones.
 */
import { EngineError } from "../../errors.ts";
import type { ConnectionRegistry } from "../connections.ts";
import type { DataServer } from "../data-server.ts";
import type { MemoryPubSub } from "../memory-pubsub.ts";
import { createNetGuard, type Resolver } from "../net-guard.ts";
import type { Props } from "../props.ts";
import type { SinkConnector } from "./connector.ts";
import { FileSink } from "./file.ts";
import { MemorySink } from "./memory.ts";
import { MqttSink } from "./mqtt.ts";
import { NatsSink } from "./nats.ts";
import { RedisPubSink } from "./redis-pub.ts";
import { RedisSink } from "./redis.ts";
import { RestSink } from "./rest.ts";
import { LogSink, LogToMemorySink, NopSink, StdoutConnector } from "./simple.ts";
import { SqlSink } from "./sql.ts";
import { SseSink } from "./sse.ts";
import { WebSocketSink } from "./websocket.ts";

export interface SinkEnv {
  readonly pubsub: MemoryPubSub;
  readonly connections?: ConnectionRegistry;
  /** websocket and sse server endpoints. */
  readonly dataServer?: DataServer;
  /** `basic.enablePrivateNet`: the REST sink may reach loopback/private addresses (default false). */
  readonly enablePrivateNet?: boolean;
  /** Host name resolution for the private-network guard (default getaddrinfo). */
  readonly resolveHost?: Resolver;
}

export const SINK_TYPES = ["file", "log", "logToMemory", "memory", "mqtt", "nats", "nop", "redis", "redisPub", "rest", "sql", "sse", "stdout", "websocket"] as const;

export function createSinkConnector(type: string, props: Props, env: SinkEnv): SinkConnector {
  switch (type) {
    case "mqtt":
      return new MqttSink(props, env.connections);
    case "nats":
      return new NatsSink(props, env.connections);
    case "log":
      return new LogSink();
    case "nop":
      return new NopSink(props);
    case "stdout":
      return new StdoutConnector();
    case "file":
      return new FileSink(props);
    case "memory":
      return new MemorySink(props, env.pubsub);
    case "rest":
      return new RestSink(props, createNetGuard({ allowPrivate: env.enablePrivateNet, resolve: env.resolveHost }));
    case "redis":
      return new RedisSink(props);
    case "redisPub":
      return new RedisPubSink(props);
    case "logToMemory":
      return new LogToMemorySink();
    case "websocket":
      return new WebSocketSink(props, env.dataServer);
    case "sse":
      return new SseSink(props, env.dataServer);
    case "sql":
      return new SqlSink(props);
  }
  throw new EngineError(`sink ${type} is not defined`);
}
