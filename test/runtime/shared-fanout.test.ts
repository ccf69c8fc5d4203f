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

/** Rules that share one evaluation (the same SELECT and options), with sinks that differ, and one evaluating alone. */
const GROUPS: { sql: string; options?: object; sinks: object[] }[] = [
  { sql: "SELECT * FROM s WHERE temp > 21.0", sinks: [{}, { fields: ["temp", "device"] }, { excludeFields: ["hum"] }, { dataTemplate: '{"t":{{.temp}}}' }] },
  // The projection fails on the strings its WHERE admits: those messages are evaluated by each rule.
  { sql: "SELECT temp * 2 AS t2, hum FROM s WHERE hum > 2", sinks: [{}, {}, {}] },
  // Not indexable: every message reaches every rule, the WHERE rejects some of them.
  { sql: "SELECT device, temp FROM s WHERE temp > hum", sinks: [{}, {}] },
  // Errors sent on to the sinks.
  { sql: "SELECT temp + 1 AS t FROM s", options: { sendError: true }, sinks: [{}, {}] },
  { sql: "SELECT temp + 1 AS t FROM s", sinks: [{}] },
];

test("rules with the same SELECT evaluate a message once and each still gives what it gives alone, joining and leaving midway", async () => {
  const { sharedStats } = await import("../../lib/runtime/shared-eval.ts");
  const shared = dataRuntime();
  const sharedDefs = streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/grp", FORMAT="json", SHARED="true")');
  const aloneDefs = streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/grp", FORMAT="json")');
  const together: RunHandle[] = [];
  open.push({ t: shared, rules: together });
  type Pair = { id: string; run: RunHandle; out: string[]; alone: { t: TestRuntime; run: RunHandle; out: string[] } };
  const pairs: Pair[] = [];
  const start = async (id: string, g: (typeof GROUPS)[number], sink: object): Promise<Pair> => {
    const def = { id, sql: g.sql, options: g.options, actions: [{ memory: { sendSingle: true, topic: `g/${id}`, ...sink } }] };
    const out = collect(shared, `g/${id}`);
    const run = await shared.rule(def, sharedDefs).start();
    together.push(run);
    const t = dataRuntime();
    const aloneOut = collect(t, `g/${id}`);
    const aloneRun = await t.rule(def, aloneDefs).start();
    open.push({ t, rules: [aloneRun] });
    return { id, run, out, alone: { t, run: aloneRun, out: aloneOut } };
  };
  for (let gi = 0; gi < GROUPS.length; gi++) {
    const g = GROUPS[gi]!;
    for (let k = 0; k < g.sinks.length; k++) pairs.push(await start(`g${gi}_${k}`, g, g.sinks[k]!));
  }
  const sendAll = async (bodies: readonly string[], to: Pair[]) => {
    for (const body of bodies) {
      await post(shared, "/grp", body);
      for (const p of to) await post(p.alone.t, "/grp", body);
    }
  };
  const half = Math.floor(PAYLOADS.length / 2);
  const before = { ...sharedStats };
  await sendAll(PAYLOADS.slice(0, half), pairs);
  const decoded = (r: RunHandle, n: number) => decoderIn(r) === n;
  await waitFor(() => pairs.every((p) => decoded(p.run, half) && decoded(p.alone.run, half)), "every rule decoded the first half");
  // The first rule of the first group (the one that recorded most) stops, a new copy joins.
  const gone = pairs[0]!;
  await gone.run.stop();
  await gone.alone.run.stop();
  const late = await start("late", GROUPS[0]!, { fields: ["hum"] });
  const live = [...pairs.slice(1), late];
  await sendAll(PAYLOADS.slice(half), live);
  await waitFor(() => live.every((p) => decoded(p.run, p === late ? PAYLOADS.length - half : PAYLOADS.length) && decoded(p.alone.run, p === late ? PAYLOADS.length - half : PAYLOADS.length)), "every live rule decoded every payload");
  // A shared stream's source node counts while the stream is open (eKuiper's shared node), so the
  // rule that left and the one that joined late are compared on their own nodes.
  const own = (p: Pair, m: Record<string, unknown>) => (p === late || p === gone ? Object.fromEntries(Object.entries(counts(m)).filter(([k]) => !k.startsWith("source_"))) : counts(m));
  for (const p of [...pairs, late]) {
    expect({ id: p.id, out: p.out }).toEqual({ id: p.id, out: p.alone.out });
    expect({ id: p.id, m: own(p, p.run.metrics()) }).toEqual({ id: p.id, m: own(p, p.alone.run.metrics()) });
  }
  // The groups did share: most messages were replayed, not evaluated again.
  expect(sharedStats.replays - before.replays).toBeGreaterThan(PAYLOADS.length);
  expect(sharedStats.records - before.records).toBeGreaterThan(0);
  // And the data reached what is not shared: the projection's and the WHERE's errors, sent on or not.
  expect(pairs[4]!.run.metrics().op_4_project_0_exceptions_total).toBeGreaterThan(0);
  expect(pairs[9]!.out.some((o) => o.includes("error"))).toBe(true);
});

/**
 * Sinks of the rules of one group: the same configuration (a memory topic or the log line differing
 * only in where it goes), a dataTemplate twice, a field selection, the log sink's bytes (json text)
 * with and without the list; what each rule's sinks say must be what they say alone.
 */
const ALIKE: object[] = [
  { memory: { topic: "a/0" } },
  { memory: { topic: "a/1" } },
  { memory: { topic: "a/2", dataTemplate: '{"t":{{.temp}},"d":"{{.device}}"}', sendSingle: true } },
  { memory: { topic: "a/3", dataTemplate: '{"t":{{.temp}},"d":"{{.device}}"}', sendSingle: true } },
  { memory: { topic: "a/4", fields: ["temp"] } },
  { log: {} },
  { log: {} },
  { log: { sendSingle: true } },
  { log: { dataTemplate: "{{.temp}} at {{.device}}", sendSingle: true } },
  { log: { dataTemplate: "{{.temp}} at {{.device}}", sendSingle: true } },
];

test("rules of one group whose sinks are configured alike share the sinks' outputs and payloads, each rule's counts and output its own", async () => {
  const { sharedStats } = await import("../../lib/runtime/shared-eval.ts");
  const { encodingStats } = await import("../../lib/sink/shared-encoding.ts");
  const sql = "SELECT * FROM s WHERE temp > 20";
  const shared = dataRuntime();
  const sharedDefs = streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/alike", FORMAT="json", SHARED="true")');
  const together: RunHandle[] = [];
  open.push({ t: shared, rules: together });
  const alone: { t: TestRuntime; run: RunHandle; out: string[] }[] = [];
  const outs: string[][] = [];
  for (let i = 0; i < ALIKE.length; i++) {
    const def = { id: `s${i}`, sql, actions: [ALIKE[i]!] };
    const topic = (ALIKE[i] as { memory?: { topic: string } }).memory?.topic;
    outs.push(topic ? collect(shared, topic) : []);
    together.push(await shared.rule(def, sharedDefs).start());
    const t = dataRuntime();
    const out = topic ? collect(t, topic) : [];
    const run = await t.rule(def, streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/alike", FORMAT="json")')).start();
    open.push({ t, rules: [run] });
    alone.push({ t, run, out });
  }
  const before = { ...sharedStats, ...encodingStats };
  // One by one, then in bursts that cross the bus together (the group's leader takes batches).
  const bodies = Array.from({ length: 120 }, (_, k) => JSON.stringify(k % 7 === 3 ? { temp: "hot", device: `d${k % 3}` } : { temp: 15 + (k % 11), device: `d${k % 3}`, hum: k }));
  for (const body of bodies.slice(0, 20)) {
    await post(shared, "/alike", body);
    for (const a of alone) await post(a.t, "/alike", body);
  }
  for (let k = 20; k < bodies.length; k += 25) {
    const burst = bodies.slice(k, k + 25);
    await Promise.all(burst.map((b) => post(shared, "/alike", b)));
    for (const a of alone) for (const b of burst) await post(a.t, "/alike", b);
  }
  const done = (r: RunHandle) => decoderIn(r) === bodies.length;
  await waitFor(() => together.every(done) && alone.every((a) => done(a.run)), "every rule decoded every message");
  const lines = (t: TestRuntime, id: string) => t.logs.filter((l) => l.startsWith(`sink result for rule ${id}: `));
  // A burst's requests may arrive in any order: the outputs are compared as sets of lines.
  const sorted = (a: readonly string[]) => [...a].sort();
  for (let i = 0; i < ALIKE.length; i++) {
    const id = `s${i}`;
    expect({ id, out: sorted(outs[i]!) }).toEqual({ id, out: sorted(alone[i]!.out) });
    expect({ id, log: sorted(lines(shared, id)) }).toEqual({ id, log: sorted(lines(alone[i]!.t, id)) });
    expect({ id, m: counts(together[i]!.metrics()) }).toEqual({ id, m: counts(alone[i]!.run.metrics()) });
  }
  // Something was sent and the strings failed the WHERE on every rule alike.
  expect(outs[0]!.length).toBeGreaterThan(0);
  expect(lines(shared, "s5").length).toBe(outs[0]!.length);
  expect(together[9]!.metrics().op_3_filter_0_exceptions_total).toBe(alone[9]!.run.metrics().op_3_filter_0_exceptions_total);
  // The members replayed whole batches, and their sinks took what the sinks alike had made.
  expect(sharedStats.batches - before.batches).toBeGreaterThan(0);
  expect(encodingStats.reused - before.reused).toBeGreaterThan(outs[0]!.length);
  expect(encodingStats.held - before.held).toBeGreaterThan(0);
});
