/** Server-sent events: the sink (an endpoint of the data server), also a connection type. */
import type { ConnectorSpec } from "../spec.ts";

export const sseSpec: ConnectorSpec = {
  tech: "sse",
  sinks: {
    sse: {
      create: (props, env) => {
        const { SseSink } = require("./sink.ts") as typeof import("./sink.ts");
        return new SseSink(props, env.dataServer);
      },
      props: { endpoint: "" },
    },
  },
  connections: { sse: {} },
};
