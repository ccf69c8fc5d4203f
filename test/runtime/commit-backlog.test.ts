/**
 * A drain's end (Acks.commit) writes a cached sink's queue through before the sources
 * acknowledge. A rule with state makes its input durable only by its checkpoints, whose barrier
 * waits for a sink's backlog (SinkPipeline.safe): the drains' ends leave a big result to the
 * backlog's slices, so a 0 ms timer fires before it is encoded, and what the cache holds once it
 * is — and what the watermark counts as written through meanwhile — is as when a stateless
 * rule's drain end encodes it at once, its sources acknowledging what made it.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IoError } from "../../lib/errors.ts";
import { Emission } from "../../lib/core/item.ts";
import { Acks } from "../../lib/runtime/acks.ts";
import type { Topology } from "../../lib/runtime/topology.ts";
import { parseSinkCommon } from "../../lib/sink/common.ts";
import type { SinkConnector } from "../../lib/sink/connector.ts";
import { SinkPipeline } from "../../lib/sink/pipeline.ts";
import { cacheDb, SinkCacheStore } from "../../lib/store/sink-cache.ts";
import { waitFor } from "../helpers/runtime.ts";

const N = 10_000;

/** A destination that is down: every item stays in the cache. */
class Down implements SinkConnector {
  readonly bytes = true;
  open(): void {}
  send(): void {
    throw new IoError("down");
  }
  close(): void {}
}

/** A cached sendSingle sink given one result of N rows, and the drain end of a rule with or without state. */
function setUp(stateless: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "floe-commit-backlog-"));
  const props = { sendSingle: true, enableCache: true, resendInterval: 60_000 };
  const p = new SinkPipeline({ ruleId: "r", type: "down", index: 0, props, common: parseSinkCommon(props), connector: new Down(), dataDir: dir, log: () => {} });
  p.open();
  const topo = { lookupOps: () => [] } as unknown as Topology;
  const acks = new Acks("r", undefined, stateless, [], [p], topo);
  const store = new SinkCacheStore(cacheDb(dir), `sink/r/${p.name}`);
  const onDisk = () => store.pages().reduce((n, pg) => n + pg.n, 0);
  const content = () => store.pages().map((pg) => store.read(pg.seq)).join("");
  p.push(new Emission(Array.from({ length: N }, (_, i) => ({ i, s: `row ${i}` })), null));
  return { p, acks, onDisk, content, dir };
}

test("the drain ends of a rule with state leave a cached sink's big result to the backlog's slices; the watermark counts it written through only once it is on disk", async () => {
  // A stateless rule's drain end: its sources acknowledge what made the result next, so it is encoded and written now.
  const now = setUp(true);
  let want: string;
  try {
    now.acks.commit();
    expect([now.p.safe(false), now.onDisk()]).toEqual([1, N]);
    want = now.content();
  } finally {
    await now.p.close(0);
    rmSync(now.dir, { recursive: true, force: true });
  }

  const { p, acks, onDisk, content, dir } = setUp(false);
  try {
    acks.commit();
    let timerSaw: number | undefined;
    setTimeout(() => (timerSaw = onDisk()), 0);
    // A drain ends in every turn meanwhile (input keeps coming); the watermark never runs ahead of the disk.
    const seen: [number, number][] = [];
    while (p.safe(false) < 1) {
      await new Promise((r) => setImmediate(r));
      acks.commit();
      seen.push([p.safe(false), onDisk()]);
    }
    await waitFor(() => timerSaw !== undefined, "the timer fired");
    expect(timerSaw!).toBeLessThan(N);
    for (const [safe, disk] of seen) expect(safe === 0 || disk === N).toBe(true);
    expect(seen.length).toBeGreaterThan(2);
    expect(onDisk()).toBe(N);
    expect(content()).toBe(want);
  } finally {
    await p.close(0);
    rmSync(dir, { recursive: true, force: true });
  }
});
