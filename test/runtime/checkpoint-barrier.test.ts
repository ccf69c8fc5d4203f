/**
 * The checkpoint barrier (runtime/checkpoint.ts): a snapshot records each sink's count of the
 * results it was given and is stored once every sink's watermark reaches it — the snapshot of that
 * moment, not a later one — and the sources acknowledge only then. Later results still in flight
 * do not hold it back: a sink that always has an unconfirmed publish still gets checkpoints. A
 * stop's final checkpoint holds the input for the sinks first and is stored only once they
 * delivered; a keyed sink's state is read when a checkpoint is stored.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Emission } from "../../lib/core/item.ts";
import { SLICE_OUTPUTS } from "../../lib/core/turn.ts";
import { Checkpointer, type SinkBarrier } from "../../lib/runtime/checkpoint.ts";
import type { Topology } from "../../lib/runtime/topology.ts";
import type { SinkConnector } from "../../lib/sink/connector.ts";
import { parseSelect } from "../../lib/sql/parse.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { checkpointStore } from "../../lib/store/checkpoint.ts";
import { decodeState } from "../../lib/store/state-codec.ts";
import { openPipeline } from "../helpers/sink.ts";
import { streams, testRuntime, waitFor } from "../helpers/runtime.ts";
import { HOLD_FOR_SINKS_MS } from "../../lib/runtime/execution.ts";

const select = () => parseSelect("SELECT * FROM s", createFunctionRegistry());

test("a snapshot waits until the sink's watermark reaches its count, and is stored then; none before", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-cp-barrier-"));
  const store = checkpointStore(dir);
  let n = 1;
  // One sink, given n results so far, `safe` of them delivered.
  let safe = 0;
  const sinks: SinkBarrier = { given: () => [n], passed: (m) => safe >= m[0]! };
  const saved: [number, number][] = [];
  const topo = { snapshot: () => ({ op: n }), sinkState: () => ({}) } as unknown as Topology;
  const cp = new Checkpointer("r", store, select(), "inc", () => {}, () => true, sinks);
  const stored = () => {
    const t = store.latest("r");
    return t === undefined ? undefined : (decodeState(t) as { ops: { op: number }; sources: { s: { $$offset: number } } });
  };
  try {
    cp.start(5, topo, () => ({ s: n * 10 }), () => {
      const s = stored()!;
      saved.push([s.ops.op, s.sources.s.$$offset]);
    });
    await Bun.sleep(40);
    // Several ticks passed: the first one's snapshot waits, nothing is stored or acknowledged.
    expect([stored(), saved]).toEqual([undefined, []]);
    n = 2;
    await Bun.sleep(20);
    // The first snapshot's barrier (1) passes while the second result is still undelivered.
    safe = 1;
    await waitFor(() => saved.length >= 1, "the waiting snapshot stored", 2000, 1);
    expect(saved[0]).toEqual([1, 10]);
    await Bun.sleep(30);
    // The next snapshot counts 2 results: it waits for the second.
    expect(saved.length).toBe(1);
    safe = 2;
    await waitFor(() => saved.length >= 2, "a newer one stored", 2000, 1);
    expect(saved[1]).toEqual([2, 20]);
    // A snapshot waiting at stop is dropped.
    n = 3;
    await Bun.sleep(20);
    cp.stop();
    safe = 3;
    await Bun.sleep(20);
    expect(stored()!.ops.op).toBe(2);
  } finally {
    cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A destination that confirms each publish `lagMs` after it, in order. */
class Lagging implements SinkConnector {
  readonly bytes = true;
  sent = 0;
  acked = 0;
  constructor(private readonly lagMs: number) {}
  open(): void {}
  send(): void {
    const n = ++this.sent;
    setTimeout(() => (this.acked = Math.max(this.acked, n)), this.lagMs);
  }
  confirmed(): number {
    return this.acked;
  }
  close(): void {}
}

test("a sink that always has a publish awaiting confirmation: checkpoints are stored, each counting only confirmed results", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-cp-inflight-"));
  const store = checkpointStore(dir);
  const conn = new Lagging(4);
  const p = openPipeline("lag", conn);
  // The topology's state is the number of results it gave the sink.
  let made = 0;
  const topo = { snapshot: () => ({ op: made }), sinkState: () => ({}) } as unknown as Topology;
  const sinks: SinkBarrier = { given: () => [p.given], passed: (m) => p.safe(true) >= m[0]! };
  const cp = new Checkpointer("r", store, select(), "inc", () => {}, () => true, sinks);
  const feed = setInterval(() => {
    for (let i = 0; i < 3; i++) p.push(new Emission([{ i: ++made }], null));
  }, 1);
  const stored: { op: number; confirmed: number; inFlight: number }[] = [];
  try {
    cp.start(10, topo, () => ({}), () => {
      const s = decodeState(store.latest("r")!) as { ops: { op: number } };
      stored.push({ op: s.ops.op, confirmed: conn.acked, inFlight: conn.sent - conn.acked });
    });
    await waitFor(() => stored.length >= 5, () => `5 checkpoints (got ${stored.length}; ${conn.sent} sent, ${conn.acked} confirmed)`, 5000, 5);
    for (const s of stored) {
      // Every result the checkpoint counts was confirmed when it was stored …
      expect(s.op).toBeLessThanOrEqual(s.confirmed);
      expect(s.op).toBeGreaterThan(0);
    }
    // … while later ones were still awaiting their confirmation: the sink was never idle.
    expect(stored.some((s) => s.inFlight > 0)).toBe(true);
    expect(p.settled).toBe(false);
  } finally {
    clearInterval(feed);
    cp.stop();
    await p.close(0);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** An endpoint that answers each request `lagMs` after it came, keeping the `n` of every body. */
function slowEndpoint(lagMs: number): { url: string; got: number[]; gate: { open: boolean }; stop: () => void } {
  const got: number[] = [];
  const gate = { open: true };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = (await req.json()) as { n: number };
      while (!gate.open) await Bun.sleep(5);
      await Bun.sleep(lagMs);
      got.push(body.n);
      return new Response("ok");
    },
  });
  return { url: `http://127.0.0.1:${server.port}/`, got, gate, stop: () => server.stop(true) };
}

/**
 * A qos 1 rule over a file (its read position is checkpointed) into a slow endpoint, without a
 * sink cache and with no grace for the sinks at close: the rule is stopped while its sink still
 * holds results, then started again and read to the end of the file.
 */
async function stopMidwayAndRestart(gateAtStop: boolean): Promise<{ got: number[]; stopMs: number; logs: string[] }> {
  const N = 120;
  const dir = mkdtempSync(join(tmpdir(), "floe-stop-cp-"));
  writeFileSync(join(dir, "in.json"), JSON.stringify(Array.from({ length: N }, (_, i) => ({ n: i + 1 }))));
  const t = testRuntime({ sinkGraceMs: 0 });
  const end = slowEndpoint(3);
  const defs = streams(`CREATE STREAM f () WITH (TYPE="file", DATASOURCE="in.json", EXTRA="{\\"path\\":\\"${dir}\\"}")`);
  const def = {
    id: "stopcp",
    sql: "SELECT n FROM f",
    actions: [{ rest: { url: end.url, method: "post", sendSingle: true, bufferLength: 16 } }],
    options: { qos: 1, checkpointInterval: "1h", enableSaveStateBeforeStop: true, bufferLength: 4 },
  };
  try {
    const first = await t.rule(def, defs).start();
    let stopMs: number;
    try {
      await waitFor(() => end.got.length >= 20, "20 results delivered");
      // Results the sink was given and has not delivered: the endpoint stops answering (or not).
      end.gate.open = !gateAtStop;
    } finally {
      const t0 = Date.now();
      await first.stop();
      stopMs = Date.now() - t0;
      end.gate.open = true;
    }
    // The next run's sinks have their grace: what it makes before the end of the file is delivered.
    const t2 = testRuntime({ dataDir: t.env.dataDir });
    let exited = false;
    const again = await t2.rule(def, defs).start(() => (exited = true));
    try {
      // The run reports its end once its sinks closed: every result it made is delivered then.
      await waitFor(() => exited, "the end of the file", 10_000);
    } finally {
      await again.stop();
    }
    return { got: end.got, stopMs, logs: [...t.logs, ...t2.logs] };
  } finally {
    end.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sorted = (ns: number[]) => [...ns].sort((a, b) => a - b);

test("a stop holds the input until its sinks delivered what they were given, and stores the checkpoint of that: the restart neither loses nor repeats", async () => {
  const r = await stopMidwayAndRestart(false);
  expect(sorted(r.got)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
}, 20_000);

test("a stop whose sinks do not deliver in time is bounded and stores no checkpoint: the restart repeats, and loses nothing", async () => {
  const r = await stopMidwayAndRestart(true);
  // Bounded: the endpoint answers nothing until the stop returned.
  expect(r.stopMs).toBeLessThan(HOLD_FOR_SINKS_MS + 3000);
  expect(r.stopMs).toBeGreaterThanOrEqual(HOLD_FOR_SINKS_MS);
  // Nothing checkpointed: the file is read from its start again.
  expect(new Set(r.got).size).toBe(120);
  expect(r.got.length).toBeGreaterThan(120);
  expect(r.logs.some((l) => l.includes("rule stopcp: its sinks did not deliver"))).toBe(true);
}, 20_000);

/** A connector that reads item keys (as the JetStream sink does). */
class Keyed implements SinkConnector {
  readonly bytes = true;
  readonly keyed = true;
  sent = 0;
  open(): void {}
  send(): void {
    this.sent++;
  }
  close(): void {}
}

test("a keyed sink's state is read when the checkpoint is stored: its key count covers the backlog the snapshot left to its slices", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-cp-keys-"));
  const store = checkpointStore(dir);
  const conn = new Keyed();
  const p = openPipeline("nats", conn);
  const topo = { snapshot: () => ({ op: 1 }), sinkState: () => ({ [p.name]: p.snapshot() }) } as unknown as Topology;
  const sinks: SinkBarrier = { given: () => [p.given], passed: (m) => p.safe(true) >= m[0]! };
  const cp = new Checkpointer("r", store, select(), "inc", () => {}, () => true, sinks);
  const N = 100 * SLICE_OUTPUTS;
  try {
    p.push(new Emission(Array.from({ length: N }, (_, i) => ({ i })), null));
    // The first snapshot is taken while the backlog is being sliced; it is stored once it is done.
    let first: string | undefined;
    cp.start(1, topo, () => ({}), () => (first ??= store.latest("r")));
    await waitFor(() => first !== undefined, "a checkpoint stored");
    const s = decodeState(first!) as { sinks: Record<string, { made: number }> };
    expect(s.sinks[p.name]!.made).toBe(N);
  } finally {
    cp.stop();
    await p.close(0);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a source offset holding an int64 (the sql source's index value) is stored and restored exactly", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-cp-int64-"));
  const store = checkpointStore(dir);
  const topo = { snapshot: () => ({}), sinkState: () => ({}), restore: () => {}, restoreSinks: () => {} } as unknown as Topology;
  const logs: string[] = [];
  const cp = new Checkpointer("r", store, select(), "inc", (l) => void logs.push(l));
  try {
    let stored = false;
    cp.start(1, topo, () => ({ s: { id: 9007199254740993n } }), () => (stored = true));
    await waitFor(() => stored, () => `a checkpoint stored (${logs[0] ?? "nothing logged"})`, 2000);
    cp.stop();
    expect(cp.restore(topo).get("s")).toEqual({ id: 9007199254740993n });
  } finally {
    cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
