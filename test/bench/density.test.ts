/**
 * The density benchmark's smoke run (bench/density.ts): a real daemon, one shared httppush stream,
 * a handful of rules of both set-ups, a few seconds of pushing. It checks counts only — every
 * rule's decoder saw every message sent and every filter passed exactly what its WHERE admits —
 * never speed.
 */
import { expect, test } from "bun:test";
import { runDensity, sameRules, variedRules } from "../../bench/density.ts";

const opts = { seconds: 2, rate: 200, settleMs: 0, pin: false, pushers: 4 } as const;

test("every copy of the same rule counts every message it was sent", async () => {
  const r = await runDensity({ ...opts, rules: sameRules(8) });
  expect(r.refused).toBe(0);
  expect(r.sent).toBe(400);
  expect(r.wrong).toEqual([]);
}, 60_000);

test("varied rules over one stream (thresholds, fields, operators, projections, windows) count exactly", async () => {
  const r = await runDensity({ ...opts, rules: variedRules(50) });
  expect(r.refused).toBe(0);
  expect(r.sent).toBe(400);
  expect(r.wrong).toEqual([]);
}, 60_000);
