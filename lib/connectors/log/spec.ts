/** The small sinks (log/sink.ts): `log`, `logToMemory`, `nop`, and floe's `stdout` (payload lines). */
import type { ConnectorSpec } from "../spec.ts";
import { LogSink, LogToMemorySink, NopSink, StdoutConnector } from "./sink.ts";

export const logSpec: ConnectorSpec = {
  tech: "log",
  sinks: {
    log: { create: () => new LogSink(), props: {} },
    logToMemory: { create: () => new LogToMemorySink(), props: {} },
    nop: { create: (props) => new NopSink(props), props: { log: false } },
    // floe's own: not in eKuiper's metadata.
    stdout: { create: () => new StdoutConnector(), metadata: "none" },
  },
};
