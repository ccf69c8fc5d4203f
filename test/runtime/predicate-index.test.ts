/**
 * A shared stream's predicate index (runtime/predicate-index.ts) is invisible: every rule's output
 * and every metric count are what the same rule gives reading the stream alone, on data mixing
 * floats, integers, nulls, missing fields, strings, booleans, objects, arrays, multi-row bodies and
 * undecodable payloads (row and decode errors counted on the same nodes with the same texts).
 */
import { afterEach, expect, test } from "bun:test";
import { collect, dataRuntime } from "../helpers/data-server.ts";
import { stoppedAfterEach, streams, testRuntime, timingFreeCounts, waitFor } from "../helpers/runtime.ts";
import { DataServer } from "../../lib/connectors/http/server.ts";
import type { RunHandle } from "../../lib/runtime/rule.ts";
import { indexableCond } from "../../lib/runtime/predicate-index.ts";
import { parseSelect } from "../../lib/sql/parse.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";

const open = stoppedAfterEach(afterEach);

const WHERES = [
  "temp > 21.0",
  "temp >= 21",
  "temp < 21.5",
  "temp <= 20",
  "temp = 21.5",
  "temp != 21.5",
  "temp = 21",
  "21 < temp",
  "(temp > 22.5)",
  "hum > 50",
  "hum != 3",
  "hum <= -2",
  "temp > -1000",
  "TEMP > 1",
  // Not indexable: each rule evaluates alone.
  "temp > 20 AND hum < 50",
  "temp > hum",
  "device = \"d1\"",
];

const PAYLOADS = [
  '{"temp":22.5,"hum":40,"device":"d1"}',
  '{"temp":21,"hum":50}',
  '{"temp":21.5,"hum":3}',
  '{"temp":null,"hum":60}',
  '{"hum":51}',
  '{}',
  '{"temp":"hot","hum":"3"}',
  '{"temp":true,"hum":false}',
  '{"temp":[1],"hum":{"a":1}}',
  '{"temp":{"v":30},"hum":[2]}',
  "oops",
  '[{"temp":25,"hum":1},{"temp":10,"hum":99}]',
  "[]",
  '{"temp":9007199254740993,"hum":-5}',
  '{"temp":-3,"hum":-2}',
  '{"temp":1e308,"hum":1e-308}',
  '{"TEMP":30,"temp":20}',
  '{"temp":20,"hum":52,"device":"d1"}',
];

function rules(prefix: string): { id: string; sql: string }[] {
  const out = WHERES.map((w, i) => ({ id: `${prefix}${i}`, sql: `SELECT * FROM s WHERE ${w}` }));
  // A projection and a count window behind an indexable WHERE.
  out.push({ id: `${prefix}p`, sql: "SELECT temp * 2 AS t2, hum FROM s WHERE temp > 21.0" });
  out.push({ id: `${prefix}w`, sql: "SELECT count(*) AS n, max(temp) AS hi FROM s WHERE temp >= 21 GROUP BY COUNTWINDOW(2)" });
  return out;
}

const counts = (m: Record<string, unknown>) => timingFreeCounts(m);

test("every rule's output and counts over a shared, indexed stream equal the rule reading the stream alone", async () => {
  const shared = dataRuntime();
  const alone = testRuntime({ dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }), predicateIndex: false });
  const defs = streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/eq", FORMAT="json", SHARED="true")');
  const both = [
    { t: shared, defs },
    { t: alone, defs },
  ];
  const runs: RunHandle[][] = [];
  const outs: string[][][] = [];
  for (const { t, defs } of both) {
    const rs: RunHandle[] = [];
    const os: string[][] = [];
    open.push({ t, rules: rs });
    for (const r of rules("r")) {
      os.push(collect(t, `out/${r.id}`));
      rs.push(await t.rule({ id: r.id, sql: r.sql, actions: [{ memory: { sendSingle: true, topic: `out/${r.id}` } }] }, defs).start());
    }
    runs.push(rs);
    outs.push(os);
  }
  // The shared stream's index holds the plain comparisons and the projection's; the compound
  // conditions and the count window (its WHERE runs inside the window) evaluate alone.
  expect(shared.hub.indexedRules("s")).toBe(14 + 1);
  expect(alone.hub.indexedRules("s")).toBe(0);

  for (const body of PAYLOADS) {
    for (const { t } of both) {
      const r = await fetch(`http://127.0.0.1:${t.env.dataServer.port}/eq`, { method: "POST", body });
      expect(r.status).toBe(200);
    }
  }
  const decoded = (rs: RunHandle[]) => rs.every((r) => r.metrics().op_s_decoder_0_records_in_total === PAYLOADS.length);
  await waitFor(() => decoded(runs[0]!) && decoded(runs[1]!), "every rule decoded every payload");
  for (let i = 0; i < runs[0]!.length; i++) {
    const id = runs[0]![i]!.id;
    expect({ id, out: outs[0]![i] }).toEqual({ id, out: outs[1]![i]! });
    expect({ id, m: counts(runs[0]![i]!.metrics()) }).toEqual({ id, m: counts(runs[1]![i]!.metrics()) });
  }
  // The data did exercise what the index must leave to the rule: type errors and a decode error.
  const m0 = runs[0]![0]!.metrics();
  // "hot", true, [1] and {"v":30} against 21.0: four row errors, the last one's text.
  expect(m0.op_3_filter_0_exceptions_total).toBe(4);
  expect(m0.op_3_filter_0_last_exception).toBe("run Where error: > is an invalid operation for map[string]interface {}");
  expect(m0.op_s_decoder_0_exceptions_total).toBe(1);
});

test("only a whole WHERE of field <op> numeric constant is indexable", () => {
  const fns = createFunctionRegistry();
  const cond = (w: string) => {
    const sel = parseSelect(`SELECT * FROM s WHERE ${w}`, fns);
    return indexableCond(sel.where!, "s", false);
  };
  expect(cond("temp > 21.0")).toEqual({ field: "temp", fold: false, op: ">", c: 21 });
  expect(cond("5 <= hum")).toEqual({ field: "hum", fold: false, op: ">=", c: 5 });
  expect(cond("temp = 9007199254740993")).toBeNull();
  expect(cond("temp > 1 AND hum > 2")).toBeNull();
  expect(cond("temp > \"a\"")).toBeNull();
  expect(cond("abs(temp) > 1")).toBeNull();
  expect(cond("temp > hum")).toBeNull();
});
