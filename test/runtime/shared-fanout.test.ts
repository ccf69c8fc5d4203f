/**
 * Many rules on one shared stream are drained together (runtime/drain.ts: one task for every rule a
 * message woke) and spared by the predicate index (runtime/predicate-index.ts), yet each rule is
 * the rule alone: its output and every count of its nodes equal those of the same rule run by
 * itself in its own runtime over an unshared stream, on data mixing numbers, nulls, missing fields,
 * strings, booleans, objects, multi-row bodies, row errors and undecodable payloads.
 */
import { afterEach, expect, test } from "bun:test";
import { collect, dataRuntime } from "../helpers/data-server.ts";
import { stoppedAfterEach, streams, timingFreeCounts, waitFor, type TestRuntime } from "../helpers/runtime.ts";
import type { RunHandle } from "../../lib/runtime/rule.ts";

const open = stoppedAfterEach(afterEach);

/** The rules: the density set-up's one rule several times, and what differs from it. */
const SQLS = [
  "SELECT * FROM s WHERE temp > 21.0",
  "SELECT * FROM s WHERE temp > 21.0",
  "SELECT * FROM s WHERE temp > 21.0",
  "SELECT * FROM s WHERE temp <= 21",
  "SELECT * FROM s WHERE hum != 3",
  "SELECT * FROM s WHERE 21.5 = temp",
  "SELECT device, temp FROM s WHERE temp >= 20",
  // A projection that fails on a row its WHERE admits (a string times two).
  "SELECT temp * 2 AS t2, hum FROM s WHERE hum > 2",
  // Evaluated by the rule alone: compound, column against column, no WHERE.
  "SELECT * FROM s WHERE temp > 20.0 AND device = \"d1\"",
  "SELECT * FROM s WHERE temp > hum",
  "SELECT hum FROM s",
  "SELECT count(*) AS n, max(temp) AS hi FROM s WHERE temp >= 21 GROUP BY COUNTWINDOW(2)",
];

const PAYLOADS = [
  '{"temp":22.5,"hum":40,"device":"d1"}',
  '{"temp":21,"hum":50}',
  '{"temp":21.5,"hum":3}',
  '{"temp":null,"hum":60}',
  '{"hum":51}',
  "{}",
  '{"temp":"hot","hum":"3"}',
  '{"temp":"warm","hum":7}',
  '{"temp":true,"hum":false}',
  '{"temp":{"v":30},"hum":[2]}',
  "oops",
  '[{"temp":25,"hum":1},{"temp":10,"hum":99}]',
  "[]",
  '{"temp":9007199254740993,"hum":-5}',
  '{"temp":20,"hum":52,"device":"d1"}',
  '{"temp":29.9,"hum":96,"device":"d9"}',
  "{not json",
  '{"temp":15,"hum":0,"device":"d0"}',
];

/**
 * Metrics that do not depend on timing. eKuiper names a shared stream's decoder node after the
 * stream (`op_s_decoder_0`), an unshared one's by its place (`op_2_decoder_0`): both read `decoder`.
 */
function counts(m: Record<string, unknown>): Record<string, unknown> {
  return timingFreeCounts(m, (k) => k.replace(/^op_(s|2)_decoder_0_/, "decoder_"));
}

const decoderIn = (r: RunHandle): unknown => {
  const m = r.metrics();
  return m.op_s_decoder_0_records_in_total ?? m.op_2_decoder_0_records_in_total;
};

async function post(t: TestRuntime, path: string, body: string): Promise<void> {
  const r = await fetch(`http://127.0.0.1:${t.env.dataServer.port}${path}`, { method: "POST", body });
  expect(r.status).toBe(200);
}

test("every rule on a shared stream gives the output and counts it gives alone, row and decode errors included", async () => {
  const shared = dataRuntime();
  const sharedDefs = streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/fan", FORMAT="json", SHARED="true")');
  const together: RunHandle[] = [];
  open.push({ t: shared, rules: together });
  const outsTogether: string[][] = [];
  const alone: { t: TestRuntime; run: RunHandle; out: string[] }[] = [];
  for (let i = 0; i < SQLS.length; i++) {
    const id = `r${i}`;
    const actions = [{ memory: { sendSingle: true, topic: `out/${id}` } }];
    outsTogether.push(collect(shared, `out/${id}`));
    together.push(await shared.rule({ id, sql: SQLS[i]!, actions }, sharedDefs).start());
    // The same rule by itself: its own runtime, its own unshared stream.
    const t = dataRuntime();
    const out = collect(t, `out/${id}`);
    const run = await t.rule({ id, sql: SQLS[i]!, actions }, streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/fan", FORMAT="json")')).start();
    open.push({ t, rules: [run] });
    alone.push({ t, run, out });
  }
  // The plain comparisons are answered by the index (the three copies, the two other SELECT *, the
  // two projections); the others evaluate every message.
  expect(shared.hub.indexedRules("s")).toBe(8);

  for (const body of PAYLOADS) {
    await post(shared, "/fan", body);
    for (const a of alone) await post(a.t, "/fan", body);
  }
  const done = (r: RunHandle) => decoderIn(r) === PAYLOADS.length;
  await waitFor(() => together.every(done) && alone.every((a) => done(a.run)), "every rule decoded every payload");
  for (let i = 0; i < SQLS.length; i++) {
    const id = `r${i}`;
    expect({ id, out: outsTogether[i] }).toEqual({ id, out: alone[i]!.out });
    expect({ id, m: counts(together[i]!.metrics()) }).toEqual({ id, m: counts(alone[i]!.run.metrics()) });
  }
  // The data did reach what the index leaves to the rules: the WHERE's type errors, the
  // projection's, and the two undecodable payloads.
  const m0 = together[0]!.metrics();
  expect(m0.op_3_filter_0_exceptions_total).toBe(4);
  expect(m0.op_s_decoder_0_exceptions_total).toBe(2);
  expect(together[7]!.metrics().op_4_project_0_exceptions_total).toBeGreaterThan(0);
  // Every copy of the same rule said the same.
  expect(outsTogether[1]).toEqual(outsTogether[0]!);
  expect(outsTogether[2]).toEqual(outsTogether[0]!);
});

test("a burst of messages reaches every rule of a shared stream, in order, each rule's rows once", async () => {
  const t = dataRuntime();
  const defs = streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/burst", FORMAT="json", SHARED="true")');
  const runs: RunHandle[] = [];
  open.push({ t, rules: runs });
  const outs: string[][] = [];
  const n = 40;
  for (let i = 0; i < n; i++) {
    outs.push(collect(t, `b/${i}`));
    runs.push(await t.rule({ id: `b${i}`, sql: i % 2 ? "SELECT k FROM s WHERE k >= 0" : "SELECT k FROM s WHERE k % 2 = 0", actions: [{ memory: { sendSingle: true, topic: `b/${i}` } }] }, defs).start());
  }
  // Messages posted at once cross the bus in the same turns: the rules they wake drain together.
  const total = 300;
  await Promise.all(Array.from({ length: total }, (_, k) => post(t, "/burst", JSON.stringify({ k }))));
  await waitFor(() => runs.every((r) => r.metrics().op_s_decoder_0_records_in_total === total), "every rule decoded every message");
  for (let i = 0; i < n; i++) {
    const ks = outs[i]!.map((o) => (JSON.parse(o) as { k: number }).k);
    const want = i % 2 ? total : total / 2;
    expect({ i, n: ks.length }).toEqual({ i, n: want });
    expect(new Set(ks).size).toBe(want);
    // Each rule's rows follow the bus's order, which is the same for every rule.
    if (i >= 2) expect(ks).toEqual(outs[i % 2]!.map((o) => (JSON.parse(o) as { k: number }).k));
  }
});
