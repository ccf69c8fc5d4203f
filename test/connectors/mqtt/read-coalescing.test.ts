/**
 * The lean reader's coalescing policy (lib/connectors/mqtt/read-coalescing.ts), on times the test
 * gives: small reads of fast arrivals pause only once the reads' work holds BUSY_SHARE of the
 * loop; an idle engine reads every message at once, a busy one coalesces, and one that has become
 * idle again stops pausing.
 */
import { describe, expect, test } from "bun:test";
import { BUSY_SHARE, ReadCoalescing } from "../../../lib/connectors/mqtt/read-coalescing.ts";

/** Reads of `n` messages every `gap` ms, each followed by `work` ms of work; the pause decisions. */
function drive(c: ReadCoalescing, from: number, reads: number, n: number, gap: number, work: number): boolean[] {
  const out: boolean[] = [];
  for (let i = 1; i <= reads; i++) {
    const t = from + i * gap;
    out.push(c.read(n, t));
    c.worked(t + work);
  }
  return out;
}

describe("read coalescing", () => {
  test("an engine with time to spare reads small fast reads without pausing", () => {
    const c = new ReadCoalescing();
    // 5 messages every 0.2 ms (25k msg/s), 0.02 ms of work each: a tenth of the loop.
    const pauses = drive(c, 1000, 200, 5, 0.2, 0.02);
    expect(pauses.some((p) => p)).toBe(false);
    expect(c.busy).toBeLessThan(BUSY_SHARE);
  });

  test("a busy engine pauses after small fast reads", () => {
    const c = new ReadCoalescing();
    // The same reads, 0.12 ms of work each: 60 % of the loop.
    const pauses = drive(c, 1000, 200, 5, 0.2, 0.12);
    expect(c.busy).toBeGreaterThan(BUSY_SHARE);
    expect(pauses.slice(-50).every((p) => p)).toBe(true);
  });

  test("it stops pausing once the work falls off", () => {
    const c = new ReadCoalescing();
    drive(c, 1000, 200, 5, 0.2, 0.12);
    const later = drive(c, 1100, 200, 5, 0.2, 0.01);
    expect(later.slice(-50).some((p) => p)).toBe(false);
  });

  test("a busy engine still reads on after a big read, and after slow arrivals", () => {
    const c = new ReadCoalescing();
    drive(c, 1000, 200, 5, 0.2, 0.12);
    // 64 messages: the reader is behind.
    expect(c.read(64, 1100)).toBe(false);
    c.worked(1100.5);
    // One message after 5 ms: below 2 per ms, a pause would gather nothing.
    expect(c.read(1, 1105)).toBe(false);
  });

  test("a lone message after a quiet spell is never held", () => {
    const c = new ReadCoalescing();
    drive(c, 1000, 200, 5, 0.2, 0.12);
    expect(c.read(1, 5000)).toBe(false);
  });

  test("reads without publishes neither pause nor count as work", () => {
    const c = new ReadCoalescing();
    expect(c.read(0, 1000)).toBe(false);
    expect(c.busy).toBe(0);
  });
});
