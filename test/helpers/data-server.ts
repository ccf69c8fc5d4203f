/** Test helpers for the data server: a runtime whose data server takes a free port, collecting memory-sink rows. */
import { DataServer } from "../../lib/connectors/http/server.ts";
import { testRuntime, type TestRuntime } from "./runtime.ts";

export function dataRuntime(): TestRuntime {
  return testRuntime({ dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }) });
}

/** Rows a memory sink publishes on `topic`, as JSON texts. */
export function collect(t: TestRuntime, topic: string): string[] {
  const got: string[] = [];
  t.env.pubsub.subscribe(
    topic,
    (_t, rows) => {
      got.push(JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v)));
      return true;
    },
    () => {},
  );
  return got;
}

/** A port that was free a moment ago (for subprocesses that must be told their port). */
export function freePort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const p = s.port!;
  s.stop(true);
  return p;
}
