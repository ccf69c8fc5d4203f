/** HTTP: the pull source and lookup (`httppull`), the push source (`httppush`, also a connection type), the REST sink. */
import type { ConnectorSpec } from "../spec.ts";

export const httpSpec: ConnectorSpec = {
  tech: "http",
  sources: {
    httppull: {
      create: (props, env) => {
        const { HttpPullSource } = require("./pull-source.ts") as typeof import("./pull-source.ts");
        return new HttpPullSource(props, env);
      },
      tuples: true,
      pulls: true,
      remote: true,
    },
    httppush: {
      create: (props, env) => {
        const { HttpPushSource } = require("./push-source.ts") as typeof import("./push-source.ts");
        return new HttpPushSource(props, env.dataServer);
      },
    },
  },
  sinks: {
    rest: {
      create: (props, env) => {
        const { RestSink } = require("./sink.ts") as typeof import("./sink.ts");
        return new RestSink(props, env.outbound);
      },
      remote: true,
      props: { url: "", method: "POST", bodyType: "json", timeout: 5000, headers: {} },
    },
  },
  lookups: {
    httppull: {
      create: (props, env) => {
        const { HttpPullLookup } = require("./lookup.ts") as typeof import("./lookup.ts");
        return new HttpPullLookup(props, env);
      },
    },
  },
  connections: { httppush: {} },
  confKeys: {
    httppull: {
      default: { url: "http://localhost", method: "post", interval: "10s", timeout: "5s", incremental: false, bodyType: "json", insecureSkipVerify: true, headers: { Accept: "application/json" }, responseType: "code" },
    },
    httppush: { default: { method: "POST" } },
  },
};
