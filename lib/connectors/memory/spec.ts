/** The in-process memory topics: the source, the sink, the lookup table. */
import type { ConnectorSpec } from "../spec.ts";

export const memorySpec: ConnectorSpec = {
  tech: "memory",
  sources: {
    memory: {
      create: (props, env) => {
        const { MemorySource } = require("./source.ts") as typeof import("./source.ts");
        return new MemorySource(props, env.pubsub);
      },
      tuples: true,
    },
  },
  sinks: {
    memory: {
      create: (props, env) => {
        const { MemorySink } = require("./sink.ts") as typeof import("./sink.ts");
        return new MemorySink(props, env.pubsub);
      },
      props: { topic: "" },
    },
  },
  lookups: {
    memory: {
      create: (props, env) => {
        const { MemoryLookup } = require("./lookup.ts") as typeof import("./lookup.ts");
        return new MemoryLookup(props, env.pubsub);
      },
    },
  },
  confKeys: { memory: {} },
};
