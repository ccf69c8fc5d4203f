/** Redis: the `redisSub` source, the `redis` sink and lookup, the `redisPub` sink (rules-and-sinks.md §11.9). */
import type { ConnectorSpec } from "../spec.ts";

export const redisSpec: ConnectorSpec = {
  tech: "redis",
  sources: {
    redisSub: {
      create: (props) => {
        const { RedisSubSource } = require("./source.ts") as typeof import("./source.ts");
        return new RedisSubSource(props);
      },
      remote: true,
    },
  },
  sinks: {
    redis: {
      create: (props) => {
        const { RedisSink } = require("./sink.ts") as typeof import("./sink.ts");
        return new RedisSink(props);
      },
      remote: true,
      props: { addr: "127.0.0.1:6379", password: "", db: 0, key: "", field: "", dataType: "string", expiration: -1 },
    },
    redisPub: {
      create: (props) => {
        const { RedisPubSink } = require("./pub-sink.ts") as typeof import("./pub-sink.ts");
        return new RedisPubSink(props);
      },
      remote: true,
      props: { address: "127.0.0.1:6379", password: "", db: 0, channel: "" },
    },
  },
  lookups: {
    redis: {
      create: (props) => {
        const { RedisLookup } = require("./lookup.ts") as typeof import("./lookup.ts");
        return new RedisLookup(props);
      },
    },
  },
  confKeys: {
    redis: { default: { addr: "127.0.0.1:6379", datatype: "string" } },
    redisSub: { default: { address: "127.0.0.1:6379", db: 0 } },
  },
};
