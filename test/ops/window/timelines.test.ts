/**
 * The worked timelines of windows.md §10, replayed on the virtual clock through the pipe-mode
 * runner: every emission, window_start/window_end/event_time value and the metrics the spec
 * gives. Cases live in fixtures/window/timelines.json (and the alignment/scan quirks of §2–§4 in
 * quirks.json); each runs on both evaluators (the
 * buffered one and, where the plan can use it, the incremental one).
 */
import { describe, expect, test } from "bun:test";
import { runCase, type GoldenCase } from "../../../lib/cli/golden.ts";
import quirks from "../../../fixtures/window/quirks.json";
import cases from "../../../fixtures/window/timelines.json";

const all = [...cases, ...quirks] as GoldenCase[];

describe("windows.md §10 timelines and the §3 quirks", () => {
  for (const evaluator of ["auto", "buffered"] as const) {
    test.each(all.map((c) => [c.name, c] as const))(`%s (${evaluator})`, async (_name, c) => {
      const diff = await runCase({ ...c, options: { ...c.options, windowEvaluator: evaluator } });
      expect(diff).toBeUndefined();
    });
  }
});
