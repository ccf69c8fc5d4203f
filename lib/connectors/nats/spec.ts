/** NATS (floe's own, docs/connectors.md "NATS"): core subjects or JetStream; the source, the sink and named connections. */
import { errorText } from "../../errors.ts";
import type { ConnectorSpec } from "../spec.ts";
import type { NatsLink } from "./connection.ts";

export const natsSpec: ConnectorSpec = {
  tech: "nats",
  sources: {
    nats: {
      create: (props, env) => {
        const { NatsSource } = require("./source.ts") as typeof import("./source.ts");
        return new NatsSource(props, { base: env.baseDir, connections: env.connections });
      },
      // Not in eKuiper's metadata lists, but its confKeys are managed like any source's.
      metadata: "unlisted",
      remote: true,
    },
  },
  sinks: {
    nats: {
      create: (props, env) => {
        const { NatsSink } = require("./sink.ts") as typeof import("./sink.ts");
        return new NatsSink(props, env.connections);
      },
      metadata: "none",
      remote: true,
    },
  },
  connections: {
    nats: {
      metadata: "unlisted",
      validate: (props) => {
        try {
          (require("./conf.ts") as typeof import("./conf.ts")).parseNatsConf(props);
          return undefined;
        } catch (e) {
          return errorText(e);
        }
      },
      open: (id, props, env) => {
        // The NATS client loads with the first NATS connection, not with the daemon (memory).
        const { parseNatsConf } = require("./conf.ts") as typeof import("./conf.ts");
        const { NatsLink } = require("./connection.ts") as typeof import("./connection.ts");
        const conf = parseNatsConf(props, { base: env.base, name: `floe-conn-${id}` });
        let nats: NatsLink | undefined = undefined;
        nats = new NatsLink(conf, (line, level) => {
          // A failed attempt's line carries more than the state shows: the state keeps the client's text.
          if (level !== "debug") env.setErr((level === "warn" && nats ? nats.status.lastMessage : line).replace(/^nats \S+: /, ""));
          env.log(line, level);
        });
        return nats;
      },
    },
  },
  // Core subjects, or JetStream with stream/durable.
  confKeys: { nats: { default: { server: "nats://127.0.0.1:4222", deliverPolicy: "all", ackWait: "30s", pullBatch: 1024 } } },
  camelProps: ["deliverPolicy", "ackWait", "ackPolicy", "maxAckPending", "pullBatch", "pendingLimit", "startSequence", "startTime", "credsFile", "certificationRaw", "privateKeyRaw", "rootCARaw", "reconnectTimeWait", "connectionTimeout", "pingInterval", "msgId", "maxInflight", "jetstream"],
};
