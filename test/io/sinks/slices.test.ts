/**
 * Sliced encoding in the sink pipeline (issue 11): one result fanning out into more than SLICE
 * outputs is encoded a slice at a time with the event loop running in between; the order of
 * every output (later results queue behind the backlog), the payloads and the back-pressure
 * (`room()` counts the backlog) are what one synchronous pass gave.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Emission } from "../../../lib/core/item.ts";
import { RowError } from "../../../lib/errors.ts";
import { parseSinkCommon } from "../../../lib/io/sinks/common.ts";
import type { SinkConnector, SinkItem } from "../../../lib/io/sinks/connector.ts";
import { SinkPipeline, SLICE } from "../../../lib/io/sinks/pipeline.ts";

class Collect implements SinkConnector {
  readonly bytes = true;
  readonly got: string[] = [];
  open(): void {}
  send(item: SinkItem): void {
    this.got.push(item.payload as string);
  }
  close(): void {}
}

function pipeline(props: Record<string, unknown> = {}) {
  const conn = new Collect();
  const p = new SinkPipeline({
    ruleId: "r",
    type: "collect",
    index: 0,
    props,
    common: parseSinkCommon({ sendSingle: true, ...props }),
    connector: conn,
    dataDir: mkdtempSync(join(tmpdir(), "floe-slices-")),
    log: () => {},
  });
  p.open();
  return { p, conn };
}

const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ i: from + i }));
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
};

test("a big emission is encoded in slices, the loop runs between them, and order is kept", async () => {
  const { p, conn } = pipeline();
  const big = SLICE * 8 + 5;
  const room0 = p.room();
  p.push(new Emission(rows(0, big), null));
  // Only the first slice was encoded synchronously; the rest waits and counts against room.
  expect(p.queued).toBe(big);
  expect(p.room()).toBeLessThan(room0 - big + SLICE + 1);
  // Results pushed meanwhile (a small emission, an error) queue behind the backlog.
  p.push(new Emission(rows(big, 3), null));
  p.push(new RowError("boom"));
  let ranBetween = false;
  setImmediate(() => (ranBetween = conn.got.length < big));
  await until(() => conn.got.length === big + 4);
  expect(ranBetween).toBe(true);
  const want = [...rows(0, big + 3).map((r) => JSON.stringify(r)), '{"error":"boom"}'];
  expect(conn.got).toEqual(want);
  expect(p.room()).toBe(room0);
  await p.close(1000);
});

test("room waiters are called once the backlog has drained", async () => {
  const { p } = pipeline({ bufferLength: SLICE * 2 });
  p.push(new Emission(rows(0, SLICE * 6), null));
  expect(p.room()).toBeLessThanOrEqual(0);
  let woke = false;
  p.onRoom(() => (woke = true));
  await until(() => woke);
  expect(p.room()).toBeGreaterThan(0);
  await p.close(1000);
});

test("end() encodes the whole backlog at once, so nothing is lost at a stop", async () => {
  const { p, conn } = pipeline();
  p.push(new Emission(rows(0, SLICE * 4), null));
  await p.close(1000);
  expect(conn.got.length).toBe(SLICE * 4);
  expect(conn.got[SLICE * 4 - 1]).toBe(JSON.stringify({ i: SLICE * 4 - 1 }));
});

test("a small emission is still encoded synchronously (no backlog)", async () => {
  const { p } = pipeline();
  const room0 = p.room();
  p.push(new Emission(rows(0, SLICE), null));
  expect(p.room()).toBe(room0 - SLICE);
  await p.close(1000);
});
