// The latency arithmetic of the bench (bench/latency.ts): send-time lookup, percentiles, id parsing.
import { describe, expect, test } from "bun:test";
import { idOf, latencyStat, publishLatencies, SendTable, windowCloseLatencies } from "../../bench/latency.ts";

describe("bench latency arithmetic", () => {
  test("a message's send time is the write that carried it", () => {
    const t = new SendTable(2);
    t.record(0, 3, 100); // messages 0..2 of connection 0 at 100 ms
    t.record(0, 5, 101.5); // 3..4
    t.record(1, 1, 100.25);
    expect([t.sentAt(0, 0), t.sentAt(0, 2), t.sentAt(0, 3), t.sentAt(0, 4), t.sentAt(1, 0)]).toEqual([100, 100, 101.5, 101.5, 100.25]);
    expect(t.sentAt(0, 5)).toBeNaN();
    expect(t.sentAt(7, 0)).toBeNaN();
  });

  test("nearest-rank p50, p99 and max of known samples", () => {
    const xs = Array.from({ length: 1000 }, (_, i) => i + 1); // 1..1000 ms
    expect(latencyStat(xs)).toEqual({ n: 1000, p50_ms: 500, p99_ms: 990, max_ms: 1000 });
    expect(latencyStat([3, 1, 2])).toEqual({ n: 3, p50_ms: 2, p99_ms: 3, max_ms: 3 });
    expect(latencyStat([])).toEqual({ n: 0, p50_ms: 0, p99_ms: 0, max_ms: 0 });
  });

  test("arrivals minus send times; unknown messages are counted, not measured", () => {
    const t = new SendTable(1);
    t.record(0, 2, 10);
    const { ms, unmatched } = publishLatencies(Float64Array.from([0, 0, 11, 0, 1, 14.5, 0, 9, 20]), t);
    expect([...ms]).toEqual([1, 4.5]);
    expect(unmatched).toBe(1);
  });

  test("window rows measure from the 10 s boundary before their arrival", () => {
    expect([...windowCloseLatencies(Float64Array.from([1_700_000_000_012, 1_700_000_001_500]), 10_000)]).toEqual([12, 1500]);
  });

  test("ids of the measured tag only", () => {
    expect(idOf('{"id":"run_3_1234","device":"dev_1"}', "run")).toEqual([3, 1234]);
    expect(idOf('{"id":"warm_0_5"}', "run")).toBeNull();
    expect(idOf('{"device":"dev_1","n":3}', "run")).toBeNull();
  });
});
