/** Files: the source (and file tables), the sink. */
import type { ConnectorSpec } from "../spec.ts";

export const fileSpec: ConnectorSpec = {
  tech: "file",
  sources: {
    file: {
      create: (props, env) => {
        const { FileSource } = require("./source.ts") as typeof import("./source.ts");
        return new FileSource(props, env);
      },
      pulls: true,
    },
  },
  sinks: {
    file: {
      create: (props) => {
        const { FileSink } = require("./sink.ts") as typeof import("./sink.ts");
        return new FileSink(props);
      },
      props: { path: "", fileType: "lines", interval: 1000, hasHeader: false, delimiter: ",", format: "json" },
    },
  },
  confKeys: {
    file: {
      default: { fileType: "json", path: "data", interval: 0, sendInterval: 0, parallel: false, actionAfterRead: 0, moveTo: "data/moved", hasHeader: false, ignoreStartLines: 0, ignoreEndLines: 0 },
    },
  },
};
