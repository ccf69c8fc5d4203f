/**
 * A stream's inlet (lib/runtime/inlet.ts), the one decode → coerce → ingest path of the daemon's
 * drains and of pipe mode's direct runner: what it coerces, how the source counts a record of
 * several rows, and a record that does not decode.
 */
import { expect, test } from "bun:test";
import { RowError } from "../../lib/errors.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { UTC } from "../../lib/value/time.ts";
import type { Obj } from "../../lib/value/values.ts";
import { StdoutSink } from "../../lib/connectors/stdio/stdout.ts";
import { planSelect } from "../../lib/plan/plan.ts";
import { streamDef } from "../../lib/plan/streams.ts";
import { Inlet } from "../../lib/runtime/inlet.ts";
import type { ErrorReport } from "../../lib/runtime/error-report.ts";
import { Topology } from "../../lib/runtime/topology.ts";
import { parseRuleFile } from "../../lib/sql/parse.ts";
import { VirtualClock } from "../../lib/ops/window/clock.ts";

const functions = createFunctionRegistry();
const SQL = 'CREATE STREAM s (f FLOAT, n BIGINT) WITH (TYPE="stdin");\nSELECT * FROM s';

function setUp(perBatch: boolean) {
  const file = parseRuleFile(SQL, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const clock = new VirtualClock(1000);
  const env = { now: () => clock.now(), zone: UTC, ruleId: "r", ruleStart: 1000 };
  const plan = planSelect(file.select, defs, { functions, env, zone: UTC }).plan;
  const out = { text: "" };
  const sink = new StdoutSink("rows", (t) => void (out.text += t), () => clock.now());
  const topo = new Topology(plan, { now: () => clock.now(), sendError: true, clock, zone: UTC }, [sink]);
  const reported: string[] = [];
  const errors: ErrorReport = { decode: (where, m) => void reported.push(`${where}: ${m}`), row: () => {}, fatal: () => {} };
  const inlet = new Inlet(topo, "s", defs.get("s")!.fields, perBatch, errors, () => "line 7");
  return { inlet, topo, sink, out, reported, node: topo.sourceMetrics("s")! };
}

test("rows that arrive decoded are coerced to the stream's schema (a copy: the row given is left as it was); rows its decoder made are left as they are", () => {
  const { inlet, topo } = setUp(true);
  const seen: Obj[] = [];
  const ingest = topo.ingest.bind(topo);
  topo.ingest = (name, t, rows, counted) => {
    seen.push(t.data);
    ingest(name, t, rows, counted);
  };
  const given: Obj = { f: 3n, n: 4 };
  inlet.ingest(given, null, 1000, false);
  expect(seen[0]).toEqual({ f: 3, n: 4n });
  expect(given).toEqual({ f: 3n, n: 4 });
  const decoded: Obj = { f: 3n, n: 4 };
  inlet.ingest([decoded], null, 1000, true);
  expect(decoded).toEqual({ f: 3n, n: 4 });
});

test("a record of several rows counts once on the source per batch, or once per row", () => {
  for (const perBatch of [true, false]) {
    const { inlet, node, sink, out } = setUp(perBatch);
    inlet.ingest([{ f: 1, n: 1n }, { f: 2, n: 2n }, { f: 3, n: 3n }], null, 1000, false);
    sink.flush();
    expect(node.recordsIn).toBe(perBatch ? 1 : 3);
    expect(node.messagesProcessed).toBe(3);
    expect(out.text.trim().split("\n")).toHaveLength(3);
  }
});

test("a payload that does not decode is the record's decode error: counted on the source, reported where it was read, no row", () => {
  const { inlet, node, sink, out, reported } = setUp(true);
  const rows = inlet.decode(() => {
    throw new RowError("invalid character in JSON payload");
  }, new Uint8Array([123]));
  sink.flush();
  expect(rows).toBeUndefined();
  expect(reported).toEqual(["line 7: invalid character in JSON payload"]);
  expect(node.recordsIn).toBe(1);
  expect(node.exceptions).toBe(1);
  expect(node.lastException).toBe("invalid character in JSON payload");
  expect(out.text).toBe("");
  expect(inlet.decode(() => [{ f: 1, n: 1n }], new Uint8Array(0))).toEqual([{ f: 1, n: 1n }]);
});
