/**
 * A window's close mark (WindowEnv.closeMarks, what a two-stage rule's partition run asks for):
 * after each event-time window's results the window sends a Watermark of the window's end
 * downstream. A window of many groups is spread across turns of the event loop like any other
 * (the turn budget), and its mark reaches the sink after the last of its rows, never before.
 */
import { describe, expect, test } from "bun:test";
import { Emission, Watermark, type Item } from "../../../lib/core/item.ts";
import { NodeMetrics } from "../../../lib/core/metrics.ts";
import type { SinkNode } from "../../../lib/core/sink.ts";
import { TURN_MS } from "../../../lib/core/turn.ts";
import { Tuple } from "../../../lib/expr/row.ts";
import { createFunctionRegistry } from "../../../lib/functions/index.ts";
import { VirtualClock } from "../../../lib/ops/window/clock.ts";
import { planSelect } from "../../../lib/plan/plan.ts";
import { streamDef } from "../../../lib/plan/streams.ts";
import { Topology } from "../../../lib/runtime/topology.ts";
import { parseRuleFile } from "../../../lib/sql/parse.ts";
import { UTC } from "../../../lib/value/time.ts";

const T0 = 1_700_000_000_000;
const SQL = `CREATE STREAM s (k STRING, x BIGINT, t BIGINT) WITH (FORMAT="JSON", TIMESTAMP="t");
SELECT k, count(*) AS n, sum(x) AS total FROM s GROUP BY k, TUMBLINGWINDOW(ss, 1)`;

/** What reached the sink, in order: a row's text, or `mark <end>`. */
class OrderSink implements SinkNode {
  readonly metrics = [new NodeMetrics("sink", "order")];
  readonly seen: string[] = [];
  push(item: Item): void {
    if (item instanceof Watermark) this.seen.push(`mark ${item.ts - T0}`);
    else if (item instanceof Emission) for (const r of item.rows) this.seen.push(Bun.inspect(r));
    else this.seen.push(`other: ${Bun.inspect(item)}`);
  }
  end(): void {}
}

function rule(turnMs: number | undefined, closeMarks: boolean) {
  const functions = createFunctionRegistry();
  const file = parseRuleFile(SQL, functions);
  const defs = new Map(file.creates.map((c) => [c.name, streamDef(c)]));
  const clock = new VirtualClock(T0);
  const env = { now: () => clock.now(), zone: UTC, ruleId: "r", ruleStart: T0 };
  const plan = planSelect(file.select, defs, { env, zone: UTC, lateTolerance: 0, isEventTime: true, windowEvaluator: "auto", functions }).plan;
  const sink = new OrderSink();
  const topo = new Topology(plan, { now: () => clock.now(), sendError: true, clock, zone: UTC, turnMs, closeMarks }, [sink]);
  const row = (k: string, x: number, at: number) => topo.ingest("s", new Tuple({ k, x: BigInt(x), t: BigInt(T0 + at) }, null, T0 + at, "s"));
  return { topo, sink, row };
}

/** 40,000 devices in the first second, one row in the second, one in the fourth (closing the first three windows). */
function feed(r: ReturnType<typeof rule>): void {
  for (let i = 0; i < 40_000; i++) r.row(`d${i}`, i % 7, Math.floor(i / 40));
  r.row("late", 1, 1500);
  r.row("last", 1, 3500);
}

const turn = () => new Promise<void>((res) => setImmediate(res));

describe("a window's close mark", () => {
  test("follows the window's rows: once per window, also for a window without rows, and none without closeMarks", () => {
    const marked = rule(undefined, true);
    feed(marked);
    const plain = rule(undefined, false);
    feed(plain);
    const marks = marked.sink.seen.filter((s) => s.startsWith("mark"));
    expect(marks).toEqual(["mark 1000", "mark 2000", "mark 3000"]);
    expect(marked.sink.seen.indexOf("mark 1000")).toBe(40_000);
    expect(marked.sink.seen[40_001]).toBe(Bun.inspect({ k: "late", n: 1n, total: 1n }));
    expect(marked.sink.seen.filter((s) => s.startsWith("other"))).toEqual([]);
    expect(marked.sink.seen.filter((s) => !s.startsWith("mark"))).toEqual(plain.sink.seen);
  });

  test("a window of 40,000 groups spreads across turns under the turn budget, and its mark waits behind its rows", async () => {
    const whole = rule(undefined, true);
    feed(whole);
    const spread = rule(TURN_MS, true);
    feed(spread);
    // The projection of 40,000 groups takes longer than one turn's budget: part of it waits.
    const inFirstTurn = spread.sink.seen.length;
    expect(inFirstTurn).toBeLessThan(40_000);
    expect(spread.sink.seen).not.toContain("mark 1000");
    let turns = 0;
    while (spread.sink.seen.length < whole.sink.seen.length && turns < 10_000) {
      await turn();
      turns++;
    }
    expect(spread.sink.seen).toEqual(whole.sink.seen);
  });
});
