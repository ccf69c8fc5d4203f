/**
 * The checkpoint barrier's watermark (SinkPipeline.given / safe): the count of leading results, in
 * order of giving, whose items are all delivered and confirmed (`safe(true)`), or also written
 * through to the cache (`safe(false)`). It must stay honest where items are split (sendSingle),
 * merged (batching), retried, cached, handed to the alter queue or built across slices (backlog),
 * and it follows the connector's confirmations only over a contiguous prefix.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Emission } from "../../lib/core/item.ts";
import { SLICE_OUTPUTS as SLICE } from "../../lib/core/turn.ts";
import { EngineError, IoError } from "../../lib/errors.ts";
import { parseSinkCommon } from "../../lib/sink/common.ts";
import type { SinkConnector, SinkItem } from "../../lib/sink/connector.ts";
import { SinkPipeline } from "../../lib/sink/pipeline.ts";
import { openPipeline } from "../helpers/sink.ts";
import { waitFor } from "../helpers/wait.ts";

/** A connector whose sends complete at once and whose confirmations the test gives (`confirm`). */
class Confirming implements SinkConnector {
  readonly bytes = true;
  /** Payloads of the sends that completed, in order. */
  readonly got: string[] = [];
  /** The next sends fail with an IO error (retried) … */
  down = 0;
  /** … or with another error (dropped). */
  refuse = 0;
  private acked = 0;
  open(): void {}
  send(item: SinkItem): void {
    if (this.down > 0) {
      this.down--;
      throw new IoError("down");
    }
    if (this.refuse > 0) {
      this.refuse--;
      throw new EngineError("refused");
    }
    this.got.push(item.payload as string);
  }
  /** The destination confirms the first `n` completed sends (a prefix, as the contract says). */
  confirm(n: number): void {
    this.acked = n;
  }
  confirmed(): number {
    return this.acked;
  }
  close(): void {}
}

const rows = (...ns: number[]) => new Emission(ns.map((i) => ({ i })), null);
const sent = (c: Confirming, n: number) => waitFor(() => c.got.length === n, () => `${n} sends (got ${c.got.length})`, 2000, 1);

test("sendSingle: a result split into several items is safe once its last item is confirmed, not before", async () => {
  const c = new Confirming();
  const p = openPipeline("w", c);
  try {
    p.push(rows(1, 2, 3));
    p.push(rows(4, 5));
    expect(p.given).toBe(2);
    await sent(c, 5);
    expect(p.safe(true)).toBe(0);
    c.confirm(2);
    expect(p.safe(true)).toBe(0);
    c.confirm(3);
    expect(p.safe(true)).toBe(1);
    c.confirm(4);
    expect(p.safe(true)).toBe(1);
    c.confirm(5);
    expect([p.safe(true), p.settled]).toEqual([2, true]);
    // Without the cache, written through means nothing more: the same watermark.
    p.push(rows(6));
    await sent(c, 6);
    expect([p.safe(false), p.safe(true), p.settled]).toEqual([2, 2, false]);
  } finally {
    await p.close(0);
  }
});

test("batching: results merged into one item are safe with it; those still in the batch hold the watermark back", async () => {
  const c = new Confirming();
  const p = openPipeline("w", c, { sendSingle: false, batchSize: 3 });
  try {
    for (let i = 0; i < 4; i++) p.push(rows(i));
    await sent(c, 1);
    expect(c.got).toEqual(['[[{"i":0}],[{"i":1}],[{"i":2}]]']);
    expect(p.safe(true)).toBe(0);
    c.confirm(1);
    // The fourth waits in the batch.
    expect(p.safe(true)).toBe(3);
    for (let i = 4; i < 6; i++) p.push(rows(i));
    await sent(c, 2);
    expect(p.safe(true)).toBe(3);
    c.confirm(2);
    expect([p.safe(true), p.given]).toEqual([6, 6]);
  } finally {
    await p.close(0);
  }
});

test("a failed send retried after the interval holds back the results after it until it is confirmed", async () => {
  const c = new Confirming();
  const p = openPipeline("w", c, { resendInterval: 20 });
  try {
    await Bun.sleep(5);
    c.down = 2;
    p.push(rows(1));
    p.push(rows(2));
    p.push(rows(3));
    await sent(c, 3);
    expect(c.got).toEqual(['{"i":1}', '{"i":2}', '{"i":3}']);
    expect(p.safe(true)).toBe(0);
    c.confirm(1);
    expect(p.safe(true)).toBe(1);
    c.confirm(3);
    expect(p.safe(true)).toBe(3);
  } finally {
    await p.close(0);
  }
});

test("a result whose item is dropped (not retried) counts as done; one that made no item too", async () => {
  const c = new Confirming();
  const p = openPipeline("w", c);
  try {
    await Bun.sleep(5);
    c.refuse = 1;
    p.push(rows(1));
    p.push(new Emission([], null));
    p.push(rows(2));
    await sent(c, 1);
    expect(c.got).toEqual(['{"i":2}']);
    // 1 dropped, 2 made nothing: only the third's unconfirmed item holds the watermark.
    expect(p.safe(true)).toBe(2);
    c.confirm(1);
    expect(p.safe(true)).toBe(3);
    expect(p.lost).toBe(1);
  } finally {
    await p.close(0);
  }
});

test("with the cache a result is safe once written through to disk; delivered only once sent and confirmed", async () => {
  const c = new Confirming();
  const p = openPipeline("w", c, { enableCache: true, resendInterval: 10 });
  try {
    await Bun.sleep(5);
    c.down = 1_000_000;
    p.push(rows(1));
    p.push(rows(2));
    // Queued, not yet written: the cache's flush runs in a microtask (or at the end of a drain).
    expect(p.safe(false)).toBe(0);
    p.flush(false);
    expect([p.safe(false), p.safe(true)]).toEqual([2, 0]);
    c.down = 0;
    await sent(c, 2);
    // Sent, so no longer waiting in the cache, but not confirmed: neither watermark counts them.
    await waitFor(() => p.queued === 0, "the cache emptied", 2000, 1);
    expect([p.safe(false), p.safe(true)]).toEqual([0, 0]);
    c.confirm(1);
    expect([p.safe(false), p.safe(true)]).toEqual([1, 1]);
    c.confirm(2);
    expect([p.safe(false), p.safe(true), p.settled]).toEqual([2, 2, true]);
  } finally {
    await p.close(0);
  }
});

test("the alter queue: while failed items wait for their resend, later results are not safe", async () => {
  const main = new Confirming();
  const resend = new Confirming();
  const props = { sendSingle: true, enableCache: true, resendAlterQueue: true, resendInterval: 10 };
  const p = new SinkPipeline({
    ruleId: "r",
    type: "w",
    index: 0,
    props,
    common: parseSinkCommon(props),
    connector: main,
    resendConnector: resend,
    dataDir: mkdtempSync(join(tmpdir(), "floe-watermark-")),
    log: () => {},
  });
  p.open();
  try {
    await Bun.sleep(5);
    main.down = 1;
    p.push(rows(1));
    p.push(rows(2));
    await sent(main, 1);
    main.confirm(1);
    // Result 1 waits for the resend instance; result 2 was delivered after it.
    expect(p.safe(true)).toBe(0);
    expect(p.safe(false)).toBe(0);
    await sent(resend, 1);
    expect(p.safe(true)).toBe(0);
    resend.confirm(1);
    expect([p.safe(true), p.settled]).toEqual([2, true]);
  } finally {
    await p.close(0);
  }
});

test("a result built across turns (the backlog) is safe only once all its items are made and confirmed", async () => {
  const c = new Confirming();
  const p = openPipeline("w", c);
  try {
    await Bun.sleep(5);
    const n = SLICE * 3;
    p.push(rows(...Array.from({ length: n }, (_, i) => i)));
    p.push(rows(-1));
    // Nothing made yet: the rows wait in the backlog.
    expect([c.got.length, p.safe(true)]).toEqual([0, 0]);
    await waitFor(() => c.got.length > 0, "the first slice", 2000, 1);
    // All but the result's last item confirmed (on a loaded machine more slices may be made by now).
    c.confirm(Math.min(c.got.length, n - 1));
    expect(p.safe(true)).toBe(0);
    await sent(c, n + 1);
    c.confirm(n);
    expect(p.safe(true)).toBe(1);
    c.confirm(n + 1);
    expect(p.safe(true)).toBe(2);
  } finally {
    await p.close(0);
  }
});

test("a whole window sent as one JSON array built across slices is safe once that one item is confirmed", async () => {
  const c = new Confirming();
  const p = openPipeline("w", c, { sendSingle: false });
  try {
    await Bun.sleep(5);
    p.push(rows(...Array.from({ length: SLICE * 8 }, (_, i) => i)));
    p.push(rows(-1));
    expect(p.safe(true)).toBe(0);
    await sent(c, 2);
    expect((JSON.parse(c.got[0]!) as unknown[]).length).toBe(SLICE * 8);
    expect(p.safe(true)).toBe(0);
    c.confirm(1);
    expect(p.safe(true)).toBe(1);
    c.confirm(2);
    expect(p.safe(true)).toBe(2);
  } finally {
    await p.close(0);
  }
});
