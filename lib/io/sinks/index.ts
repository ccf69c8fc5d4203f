/**
 * Sink connectors by action type (rules-and-sinks.md §1.2): `sink <type> is not defined` for any
 * other. Connector properties are validated first, then the common ones.
 */
import { EngineError } from "../../errors.ts";
import type { ConnectionRegistry } from "../connections.ts";
import type { DataServer } from "../data-server.ts";
import type { MemoryPubSub } from "../memory-pubsub.ts";
import type { Resolver } from "../net-guard.ts";
import type { Props } from "../props.ts";
import type { SinkConnector } from "./connector.ts";
import { LogSink, LogToMemorySink, NopSink, StdoutConnector } from "./simple.ts";

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

/**
 * A connector of `type`. Each connector's module (and the client library behind it) loads with the
 * first action of its type, so that pipe mode and an idle daemon do not carry the ones they never
 * use (issue 11, start-up and memory).
 */
export function createSinkConnector(type: string, props: Props, env: SinkEnv): SinkConnector {
  switch (type) {
    case "mqtt": {
      const { MqttSink } = require("./mqtt.ts") as typeof import("./mqtt.ts");
      return new MqttSink(props, env.connections);
    }
    case "nats": {
      const { NatsSink } = require("./nats.ts") as typeof import("./nats.ts");
      return new NatsSink(props, env.connections);
    }
    case "log":
      return new LogSink();
    case "nop":
      return new NopSink(props);
    case "stdout":
      return new StdoutConnector();
    case "logToMemory":
      return new LogToMemorySink();
    case "file": {
      const { FileSink } = require("./file.ts") as typeof import("./file.ts");
      return new FileSink(props);
    }
    case "memory": {
      const { MemorySink } = require("./memory.ts") as typeof import("./memory.ts");
      return new MemorySink(props, env.pubsub);
    }
    case "rest": {
      const { RestSink } = require("./rest.ts") as typeof import("./rest.ts");
      const { createNetGuard } = require("../net-guard.ts") as typeof import("../net-guard.ts");
      return new RestSink(props, createNetGuard({ allowPrivate: env.enablePrivateNet, resolve: env.resolveHost }));
    }
    case "redis": {
      const { RedisSink } = require("./redis.ts") as typeof import("./redis.ts");
      return new RedisSink(props);
    }
    case "redisPub": {
      const { RedisPubSink } = require("./redis-pub.ts") as typeof import("./redis-pub.ts");
      return new RedisPubSink(props);
    }
    case "websocket": {
      const { WebSocketSink } = require("./websocket.ts") as typeof import("./websocket.ts");
      return new WebSocketSink(props, env.dataServer);
    }
    case "sse": {
      const { SseSink } = require("./sse.ts") as typeof import("./sse.ts");
      return new SseSink(props, env.dataServer);
    }
    case "sql": {
      const { SqlSink } = require("./sql.ts") as typeof import("./sql.ts");
      return new SqlSink(props);
    }
  }
  throw new EngineError(`sink ${type} is not defined`);
}
