/** SQL databases (sqlite, mysql, postgres): the polling source, the sink, the lookup table and the `SELECT 1` check. */
import type { ConnectorSpec, Ping } from "../spec.ts";

const ping: Ping = (props) => (require("./ping.ts") as typeof import("./ping.ts")).pingSql(props);

export const sqlSpec: ConnectorSpec = {
  tech: "sql",
  sources: {
    sql: {
      create: (props) => {
        const { SqlSource } = require("./source.ts") as typeof import("./source.ts");
        return new SqlSource(props);
      },
      tuples: true,
      pulls: true,
      remote: true,
      ping,
    },
  },
  sinks: {
    sql: {
      create: (props) => {
        const { SqlSink } = require("./sink.ts") as typeof import("./sink.ts");
        return new SqlSink(props);
      },
      remote: true,
      ping,
      props: { dburl: "", table: "", fields: [], rowKindField: "", keyField: "" },
    },
  },
  lookups: {
    sql: {
      create: (props) => {
        const { SqlLookup } = require("./lookup.ts") as typeof import("./lookup.ts");
        return new SqlLookup(props);
      },
      ping,
    },
  },
  confKeys: { sql: { default: { interval: 10000, dburl: "" } } },
};
