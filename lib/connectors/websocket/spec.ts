/** WebSocket: the source and the sink, each a server endpoint or a client; also a connection type. */
import type { ConnectorSpec } from "../spec.ts";

export const websocketSpec: ConnectorSpec = {
  tech: "websocket",
  sources: {
    websocket: {
      create: (props, env) => {
        const { WebSocketSource } = require("./source.ts") as typeof import("./source.ts");
        return new WebSocketSource(props, env.dataServer, env.outbound);
      },
      remote: true,
    },
  },
  sinks: {
    websocket: {
      create: (props, env) => {
        const { WebSocketSink } = require("./sink.ts") as typeof import("./sink.ts");
        return new WebSocketSink(props, env.dataServer, env.outbound);
      },
      remote: true,
      props: { addr: "", path: "", scheme: "ws" },
    },
  },
  connections: { websocket: {} },
  confKeys: { websocket: { default: { addr: "" } } },
};
