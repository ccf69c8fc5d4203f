/** The simulator: rows from its `data`, every `interval`; also a lookup table. */
import type { ConnectorSpec } from "../spec.ts";

export const simulatorSpec: ConnectorSpec = {
  tech: "simulator",
  sources: {
    simulator: {
      create: (props) => {
        const { SimulatorSource } = require("./source.ts") as typeof import("./source.ts");
        return new SimulatorSource(props);
      },
      tuples: true,
      pulls: true,
    },
  },
  lookups: {
    simulator: {
      create: (props) => {
        const { SimulatorLookup } = require("./lookup.ts") as typeof import("./lookup.ts");
        return new SimulatorLookup(props);
      },
    },
  },
  confKeys: { simulator: { default: { data: [{ temperature: 22.5, humidity: 50 }], interval: "1s", loop: true } } },
};
