/**
 * Rules with the same pure SELECT and options over the same stream share one plan
 * (runtime/plan-share.ts) and one parsed statement (sql/shared-select.ts); each run still has
 * its own operators, so the rules sharing a plan send to their own sinks, stop and change
 * apart, and count their own errors.
 */
import { afterEach, expect, test } from "bun:test";
import { collect } from "../helpers/data-server.ts";
import { metric, stoppedAfterEach, streams, testRuntime, waitFor, type TestRuntime } from "../helpers/runtime.ts";
import { DataServer } from "../../lib/connectors/http/server.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { planRule } from "../../lib/plan/plan-rule.ts";
import { parseRuleOptions } from "../../lib/plan/rule-options.ts";
import { samePlan } from "../../lib/runtime/plan-share.ts";
import type { RunHandle } from "../../lib/runtime/rule.ts";
import { parseSharedSelect } from "../../lib/sql/shared-select.ts";
import { parseSelect } from "../../lib/sql/parse.ts";
import { UTC } from "../../lib/value/time.ts";

const open = stoppedAfterEach(afterEach);
const functions = createFunctionRegistry();
const defs = streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/ps", FORMAT="json", SHARED="true")');

function planned(id: string, sql: string, options: Record<string, unknown> = {}) {
  const select = parseSelect(sql, functions);
  const o = parseRuleOptions(id, options, {});
  const plan = planRule({ id, select, options: o }, defs, { functions, zone: UTC, decoder: () => true }).plan;
  return samePlan(plan, select, o, false);
}

test("equal pure chains get one plan; a function call, other options or another SELECT get their own", () => {
  const a = planned("a", "SELECT * FROM s WHERE temp > 21.0");
  expect(planned("b", "SELECT * FROM s WHERE temp > 21.0")).toBe(a);
  expect(planned("c", "SELECT * FROM s WHERE temp > 22.0")).not.toBe(a);
  expect(planned("d", "SELECT * FROM s WHERE temp > 21.0", { sendError: false })).not.toBe(a);
  const call = planned("e", "SELECT abs(temp) AS t FROM s WHERE temp > 21.0");
  expect(planned("f", "SELECT abs(temp) AS t FROM s WHERE temp > 21.0")).not.toBe(call);
  const windowed = planned("g", "SELECT count(*) AS n FROM s GROUP BY TUMBLINGWINDOW(ss, 1)");
  expect(planned("h", "SELECT count(*) AS n FROM s GROUP BY TUMBLINGWINDOW(ss, 1)")).not.toBe(windowed);
});

test("equal pure SELECT texts parse to one statement; a SELECT calling a function parses anew", () => {
  const sql = "SELECT k, temp FROM s WHERE temp > 21.0";
  expect(parseSharedSelect(sql, functions)).toBe(parseSharedSelect(sql, functions));
  const call = "SELECT abs(temp) FROM s";
  expect(parseSharedSelect(call, functions)).not.toBe(parseSharedSelect(call, functions));
});

async function post(t: TestRuntime, body: object): Promise<void> {
  const r = await fetch(`http://127.0.0.1:${t.env.dataServer.port}/ps`, { method: "POST", body: JSON.stringify(body) });
  expect(r.status).toBe(200);
}

const ks = (out: string[]) => out.flatMap((o) => (JSON.parse(o) as { k: number }[]).map((r) => r.k));

test("rules sharing a plan send to their own sinks, stop and change apart, and count their own errors", async () => {
  const t = testRuntime({ dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }) });
  const sql = "SELECT k, temp FROM s WHERE temp > 21.0";
  const runs: RunHandle[] = [];
  open.push({ t, rules: runs });
  const outs = [0, 1, 2].map((i) => collect(t, `ps/${i}`));
  const start = async (i: number, q: string) => {
    const run = await t.rule({ id: `p${i}`, sql: q, actions: [{ memory: { topic: `ps/${i}`, ...(i === 2 ? { fields: ["k"] } : {}) } }] }, defs).start();
    runs.push(run);
    return run;
  };
  const [r0, r1, r2] = [await start(0, sql), await start(1, sql), await start(2, sql)];
  const decoded = (r: RunHandle) => Number(metric(r, "op_s_decoder_0_records_in_total"));
  let k = 0;
  const send = async (n: number) => {
    // Every fifth message fails the WHERE (a string compared with a number).
    for (let i = 0; i < n; i++, k++) await post(t, { k, temp: k % 5 === 4 ? "hot" : 15 + k });
  };
  await send(10);
  await waitFor(() => [r0!, r1!, r2!].every((r) => decoded(r) === 10), "every rule decoded the first ten");
  // One rule stops while the others run on.
  await r1!.stop();
  await send(10);
  await waitFor(() => decoded(r0!) === 20 && decoded(r2!) === 20, "the running rules decoded twenty");
  // The stopped rule comes back changed: its own SELECT, its own plan.
  const r1b = await start(1, "SELECT k, temp FROM s WHERE temp > 30.0");
  await send(10);
  await waitFor(() => decoded(r0!) === 30 && decoded(r2!) === 30 && decoded(r1b) === 10, "the last ten decoded");

  const admitted = (from: number, to: number, over: number) => Array.from({ length: to - from }, (_, i) => from + i).filter((x) => x % 5 !== 4 && 15 + x > over);
  await waitFor(() => ks(outs[0]!).length === admitted(0, 30, 21).length && ks(outs[2]!).length === admitted(0, 30, 21).length, "sinks 0 and 2 received every admitted row");
  expect(ks(outs[0]!)).toEqual(admitted(0, 30, 21));
  // Sink 2 selects its own fields of the same results.
  expect(outs[2]!.map((o) => JSON.parse(o) as object[]).flat().every((r) => Object.keys(r).join() === "k")).toBe(true);
  expect(ks(outs[2]!)).toEqual(admitted(0, 30, 21));
  await waitFor(() => ks(outs[1]!).length === admitted(0, 10, 21).length + admitted(20, 30, 30).length, "sink 1 received its rows");
  expect(ks(outs[1]!)).toEqual([...admitted(0, 10, 21), ...admitted(20, 30, 30)]);
  // Each run counts the failures of what it took itself.
  expect(metric(r0!, "op_3_filter_0_exceptions_total")).toBe(6);
  expect(metric(r2!, "op_3_filter_0_exceptions_total")).toBe(6);
  expect(metric(r1b, "op_3_filter_0_exceptions_total")).toBe(2);
  expect(metric(r0!, "op_3_filter_0_records_in_total")).toBe(30);
  expect(metric(r1b, "op_3_filter_0_records_in_total")).toBe(10);
});
