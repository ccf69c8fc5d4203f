/**
 * Sink connectors by action type (rules-and-sinks.md §1.2): `sink <type> is not defined` for any
 * other. Connector properties are validated first, then the common ones.
 */
import { EngineError } from "../../errors.ts";
import type { ConnectionRegistry } from "../connections.ts";
import type { MemoryPubSub } from "../memory-pubsub.ts";
import type { Props } from "../props.ts";
import type { SinkConnector } from "./connector.ts";
import { FileSink } from "./file.ts";
import { MemorySink } from "./memory.ts";
import { MqttSink } from "./mqtt.ts";
import { RedisSink } from "./redis.ts";
import { RestSink } from "./rest.ts";
import { LogSink, NopSink, StdoutConnector } from "./simple.ts";

export interface SinkEnv {
  readonly pubsub: MemoryPubSub;
  readonly connections?: ConnectionRegistry;
}

export const SINK_TYPES = ["file", "log", "memory", "mqtt", "nop", "redis", "rest", "stdout"] as const;

export function createSinkConnector(type: string, props: Props, env: SinkEnv): SinkConnector {
  switch (type) {
    case "mqtt":
      return new MqttSink(props, env.connections);
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
      return new RestSink(props);
    case "redis":
      return new RedisSink(props);
  }
  throw new EngineError(`sink ${type} is not defined`);
}
