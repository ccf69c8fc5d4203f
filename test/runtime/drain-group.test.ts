/**
 * The rules of a shared stream with the same SELECT share one drain (runtime/drain-group.ts): the
 * leader takes each message for the parked members. Whoever leaves, is traced or stops, every
 * member still takes each message once, in the bus's order, with the counts a rule alone has.
 */
import { afterEach, expect, test } from "bun:test";
import { collect } from "../helpers/data-server.ts";
import { stoppedAfterEach, streams, testRuntime, timingFreeCounts, waitFor, type TestRuntime } from "../helpers/runtime.ts";
import { DataServer } from "../../lib/connectors/http/server.ts";
import type { RunHandle } from "../../lib/runtime/rule.ts";
import type { Span } from "../../lib/runtime/trace/span.ts";

const open = stoppedAfterEach(afterEach);

async function post(t: TestRuntime, path: string, body: string): Promise<void> {
  const r = await fetch(`http://127.0.0.1:${t.env.dataServer.port}${path}`, { method: "POST", body });
  expect(r.status).toBe(200);
}

const ks = (out: string[]) => out.map((o) => (JSON.parse(o) as { k: number }).k);
const decoded = (r: RunHandle) => r.metrics().op_s_decoder_0_records_in_total;

/** `n` copies of one rule on a shared stream, each with its memory sink's rows. */
async function copies(t: TestRuntime, path: string, sql: string, n: number): Promise<{ runs: RunHandle[]; outs: string[][] }> {
  const defs = streams(`CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="${path}", FORMAT="json", SHARED="true")`);
  const runs: RunHandle[] = [];
  const outs: string[][] = [];
  open.push({ t, rules: runs });
  for (let i = 0; i < n; i++) {
    outs.push(collect(t, `c/${i}`));
    runs.push(await t.rule({ id: `c${i}`, sql, actions: [{ memory: { sendSingle: true, topic: `c/${i}` } }] }, defs).start());
  }
  return { runs, outs };
}

test("the leader stops amid a burst: every other member still takes each message once, in order", async () => {
  const t = testRuntime({ dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }) });
  const { runs, outs } = await copies(t, "/lead", "SELECT k FROM s WHERE k % 3 != 1", 6);
  const total = 400;
  let sent = 0;
  let stopped: Promise<void> | undefined;
  await Promise.all(
    Array.from({ length: total }, async (_, k) => {
      await post(t, "/lead", JSON.stringify({ k }));
      // The first rule attached leads; it stops while messages are still arriving.
      if (++sent === total / 4) stopped = runs[0]!.stop();
    }),
  );
  await stopped;
  const rest = runs.slice(1);
  await waitFor(() => rest.every((r) => decoded(r) === total), "every remaining member decoded every message");
  const want = ks(outs[1]!);
  expect(want.length).toBe(Array.from({ length: total }, (_, k) => k).filter((k) => k % 3 !== 1).length);
  expect(new Set(want).size).toBe(want.length);
  for (let i = 2; i < runs.length; i++) expect({ i, k: ks(outs[i]!) }).toEqual({ i, k: want });
  // What the leader sent before it stopped is the start of the same sequence.
  const first = ks(outs[0]!);
  expect(first.length).toBeGreaterThan(0);
  expect(want.slice(0, first.length)).toEqual(first);
  for (let i = 2; i < runs.length; i++) expect(timingFreeCounts(runs[i]!.metrics())).toEqual(timingFreeCounts(runs[1]!.metrics()));
});

test("a traced member, leader or not, takes its own messages meanwhile and its counts stay the group's", async () => {
  const spans: Span[] = [];
  const t = testRuntime({ dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }), traces: { record: (s) => void spans.push(s) } });
  const { runs, outs } = await copies(t, "/traced", "SELECT k, v * 2 AS v2 FROM s WHERE v > 1", 4);
  let k = 0;
  const send = async (n: number) => {
    for (let i = 0; i < n; i++, k++) await post(t, "/traced", JSON.stringify({ k, v: k % 4 === 0 ? "x" : k % 5 }));
    await waitFor(() => runs.every((r) => decoded(r) === k), `every member decoded ${k}`);
  };
  await send(12);
  // A follower is traced, then the leader too; then neither.
  runs[2]!.trace("always");
  await send(12);
  runs[0]!.trace("always");
  await send(12);
  runs[2]!.trace(undefined);
  runs[0]!.trace(undefined);
  await send(12);
  expect(spans.some((s) => s.name === "source_s")).toBe(true);
  for (let i = 1; i < runs.length; i++) {
    expect({ i, out: outs[i] }).toEqual({ i, out: outs[0] });
    expect({ i, m: timingFreeCounts(runs[i]!.metrics()) }).toEqual({ i, m: timingFreeCounts(runs[0]!.metrics()) });
  }
  // The strings failed the projection on every member, each counting its own.
  expect(runs[3]!.metrics().op_4_project_0_exceptions_total).toBe(runs[0]!.metrics().op_4_project_0_exceptions_total);
  expect(Number(runs[0]!.metrics().op_3_filter_0_exceptions_total) + Number(runs[0]!.metrics().op_4_project_0_exceptions_total)).toBeGreaterThan(0);
});

test("a member that leads or is traced after its leader starts with the messages the leader had yet to take", async () => {
  const { Bus } = await import("../../lib/core/bus.ts");
  const { DrainGroup } = await import("../../lib/runtime/drain-group.ts");
  const { SourceMessage } = await import("../../lib/source/message.ts");
  const bus = new Bus<InstanceType<typeof SourceMessage>>();
  const groups = new Map<string, unknown>();
  const kOf = (m: InstanceType<typeof SourceMessage>) => (m.rows as { k: number }).k;
  const member = (name: string) => {
    const sub = bus.subscribe(16, "block", () => void woken.push(name));
    const got: number[] = [];
    const m = {
      sub,
      alone: false,
      room: () => 100,
      follow: (buf: readonly InstanceType<typeof SourceMessage>[], n: number) => {
        for (let i = 0; i < n; i++) got.push(kOf(buf[i]!));
      },
      wake: () => void woken.push(name),
      // Followed batch by batch (an eager member: no tally).
      eager: true,
      lazy: false,
      markTally: () => {},
      catchUpTally: () => {},
      followItems: () => {},
      skipped: () => {},
      got,
    };
    return m;
  };
  const woken: string[] = [];
  const msg = (k: number) => new SourceMessage(null, { k }, null);
  const a = member("a");
  const b = member("b");
  const c = member("c");
  const g = DrainGroup.join(groups, "k", a);
  DrainGroup.join(groups, "k", b);
  DrainGroup.join(groups, "k", c);
  expect(g.leader).toBe(a);
  // Nothing taken yet by anyone: b and c park once the leader's queue is empty.
  g.settle(a);
  expect(g.size).toBe(2);
  expect(bus.publish([msg(1), msg(2), msg(3)])).toBe(true);
  expect([a.sub.length, b.sub.length, c.sub.length]).toEqual([3, 0, 0]);
  expect(woken).toEqual(["a"]);
  // The leader takes one and hands it out, then c is traced: it adopts the two still waiting.
  const buf: InstanceType<typeof SourceMessage>[] = [];
  a.sub.take(buf, 1);
  g.fanOut(buf, 1, 0, null);
  c.alone = true;
  g.unpark(c);
  expect(c.sub.length).toBe(2);
  expect(c.sub.parked).toBe(false);
  expect(woken).toEqual(["a", "c"]);
  // The bus queues for c again; the leader leaves with three waiting: b leads with them.
  expect(bus.publish([msg(4)])).toBe(true);
  expect([a.sub.length, b.sub.length, c.sub.length]).toEqual([3, 0, 3]);
  g.leave(a);
  expect(g.leader).toBe(b);
  expect(b.sub.parked).toBe(false);
  const rest: InstanceType<typeof SourceMessage>[] = [];
  b.sub.take(rest, 10);
  expect(rest.map(kOf)).toEqual([2, 3, 4]);
  expect(b.got).toEqual([1]);
  // c took message 1 while parked, then 2 and 3 from its own queue.
  expect(c.got).toEqual([1]);
  g.leave(b);
  g.leave(c);
  expect(groups.size).toBe(0);
});

for (const slow of ["leader", "member"]) {
  test(`a ${slow} whose sink has no room waits on its own queue, as alone; the others go on; nothing is lost`, async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    const target = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (req) => {
        seen.push(await req.text());
        await gate;
        return new Response("ok");
      },
    });
    try {
      const t = testRuntime({ dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }) });
      const defs = streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/room", FORMAT="json", SHARED="true")');
      const sql = "SELECT k FROM s WHERE k >= 0";
      const runs: RunHandle[] = [];
      open.push({ t, rules: runs });
      const fast = [collect(t, "room/a"), collect(t, "room/c")];
      const rest = async () => runs.push(await t.rule({ id: "b", sql, actions: [{ rest: { url: `http://127.0.0.1:${target.port}/`, method: "post", sendSingle: true, bufferLength: 1 } }] }, defs).start());
      // The first rule attached leads.
      if (slow === "leader") await rest();
      runs.push(await t.rule({ id: "a", sql, actions: [{ memory: { sendSingle: true, topic: "room/a" } }] }, defs).start());
      if (slow === "member") await rest();
      runs.push(await t.rule({ id: "c", sql, actions: [{ memory: { sendSingle: true, topic: "room/c" } }] }, defs).start());
      const { sharedStats } = await import("../../lib/runtime/shared-eval.ts");
      const before = sharedStats.replays;
      const total = 12;
      for (let k = 0; k < total; k++) await post(t, "/room", JSON.stringify({ k }));
      // The rest sink holds its first row meanwhile; the memory sinks take every row.
      await waitFor(() => fast.every((o) => o.length === total), "every row at the fast sinks");
      expect(seen.length).toBe(1);
      expect(sharedStats.replays).toBeGreaterThan(before);
      release();
      await waitFor(() => seen.length === total, "every row at the slow sink");
      const want = Array.from({ length: total }, (_, k) => k);
      expect(ks(fast[0]!)).toEqual(want);
      expect(ks(fast[1]!)).toEqual(want);
      expect(seen.map((s) => (JSON.parse(s) as { k: number }).k)).toEqual(want);
      for (const r of runs) expect({ id: r.id, n: decoded(r) }).toEqual({ id: r.id, n: total });
    } finally {
      target.stop(true);
    }
  }, 20_000);
}

test("members counted by their group's tally: read midway, peeked, stopped, each count is the rule's alone", async () => {
  const { Peek } = await import("../../lib/runtime/peek.ts");
  const t = testRuntime({ dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }) });
  const { runs, outs } = await copies(t, "/tally", "SELECT k FROM s WHERE k > 3", 5);
  // The same rule by itself (alone on its shared stream), for the expected counts.
  const alone = testRuntime({ dataServer: new DataServer({ hostname: "127.0.0.1", port: 0 }) });
  const aloneRun = await alone.rule({ id: "c1", sql: "SELECT k FROM s WHERE k > 3", actions: [{ memory: { sendSingle: true, topic: "c/1" } }] }, streams('CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/tally", FORMAT="json", SHARED="true")')).start();
  open.push({ t: alone, rules: [aloneRun] });
  const { sharedStats } = await import("../../lib/runtime/shared-eval.ts");
  const before = sharedStats.batches;
  let k = 0;
  const burst = async (n: number) => {
    const ks = Array.from({ length: n }, () => k++);
    // Bursts cross the bus together: the leader takes batches; k ≤ 3 the index spares.
    await Promise.all(ks.map((x) => post(t, "/tally", JSON.stringify({ k: x % 10 }))));
    for (const x of ks) await post(alone, "/tally", JSON.stringify({ k: x % 10 }));
    await waitFor(() => runs.slice(1).every((r) => decoded(r) === k) && decoded(aloneRun) === k, `every member decoded ${k}`);
  };
  await burst(40);
  // Read midway: a lazy member's counts are caught up when read.
  expect(timingFreeCounts(runs[2]!.metrics())).toEqual(timingFreeCounts(aloneRun.metrics()));
  const peek = new Peek();
  runs[3]!.peek(peek);
  await burst(40);
  runs[3]!.peek(undefined);
  expect(peek.snapshot()["op_3_filter"]?.seen).toBeGreaterThan(0);
  await burst(40);
  for (let i = 1; i < runs.length; i++) expect({ i, m: timingFreeCounts(runs[i]!.metrics()) }).toEqual({ i, m: timingFreeCounts(aloneRun.metrics()) });
  for (let i = 1; i < runs.length; i++) expect({ i, n: outs[i]!.length }).toEqual({ i, n: (k / 10) * 6 });
  // The group counted whole batches for its lazy members.
  expect(sharedStats.batches).toBeGreaterThan(before);
  // A stopped member keeps the counts of its run.
  await runs[4]!.stop();
  expect(timingFreeCounts(runs[4]!.metrics())).toEqual(timingFreeCounts(aloneRun.metrics()));
});
