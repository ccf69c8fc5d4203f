/** Rule options: defaults, Go decode errors and validation (rules-and-sinks.md §1.1, §2). */
import { expect, test } from "bun:test";
import { parseRuleOptions } from "../../lib/plan/rule-options.ts";

function message(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  return "no error";
}

test.each([
  [{ sendError: "yes" }, "json: cannot unmarshal string into Go struct field RuleOption.options.sendError of type bool"],
  [{ bufferLength: "abc" }, "json: cannot unmarshal string into Go struct field RuleOption.options.bufferLength of type int"],
  [{ duration: 5 }, "json: cannot unmarshal number into Go struct field RuleOption.options.duration of type string"],
  [[1], "json: cannot unmarshal array into Go struct field Rule.options of type def.RuleOption"],
  [{ lateTolerance: 1.5 }, "duration 1.5 is not an integer"],
  [{ checkpointInterval: "5x" }, 'time: unknown unit "x" in duration "5x"'],
  [{ concurrency: -1, qos: "1" }, "json: cannot unmarshal string into Go struct field RuleOption.options.qos of type int"],
  [{ lateTolerance: "-1ms", restartStrategy: { attempts: -1 } }, "Rule r has invalid options: invalidLateTol:lateTol must be greater than 0\ninvalidRestartAttempts:restart attempts must be greater than 0."],
  [{ duration: "x" }, 'Rule r has invalid options: time: invalid duration "x".'],
  [{ cronDatetimeRange: [{ begin: "2025-01-01", end: "2025-01-02 00:00:00" }] }, 'Rule r has invalid options: validate cronDatetimeRange failed, err:parsing time "2025-01-01" as "2006-01-02 15:04:05": cannot parse "2025-01-01" as "2006".'],
])("%j is refused: %s", (given, err) => {
  expect(message(() => parseRuleOptions("r", given))).toBe(err);
});

test("only the inherited keys take their default from kuiper.yaml", () => {
  const o = parseRuleOptions("r", { BUFFERLENGTH: 5 }, { bufferLength: 2048, qos: 1, lateTolerance: "2s", sendNilField: true, cron: "* * * * *" });
  expect([o.bufferLength, o.qos, o.lateTolerance, o.sendNilField, o.cron]).toEqual([5, 1, 2000, false, ""]);
  expect(o.raw).toEqual({ BUFFERLENGTH: 5, qos: 1, lateTolerance: "2s" });
});

test("built-in defaults apply when kuiper.yaml is silent", () => {
  const o = parseRuleOptions("r", null);
  expect([o.isEventTime, o.lateTolerance, o.concurrency, o.bufferLength, o.qos, o.checkpointInterval, o.restartStrategy.attempts]).toEqual([false, 1000, 1, 1024, 0, 300_000, 0]);
  expect([o.subscriberCapacity, o.overflow, o.incrementalWindow, o.windowEvaluator]).toEqual([4096, "block", false, "auto"]);
});

test("floe's derived settings: bus capacity, drop-oldest opt-in, sendNil, duration in ms, incremental windows", () => {
  const o = parseRuleOptions("r", {
    bufferLength: 10,
    disableBufferFullDiscard: false,
    sendNil: true,
    duration: "1m30s",
    planOptimizeStrategy: { enableIncrementalWindow: true },
    windowEvaluator: "buffered",
  });
  expect([o.subscriberCapacity, o.overflow, o.sendNilField, o.durationMs, o.incrementalWindow, o.windowEvaluator]).toEqual([10, "drop-oldest", true, 90_000, true, "buffered"]);
});

test("experiment.useSliceTuple is read with Go's case-insensitive keys; off unless true", () => {
  expect(parseRuleOptions("r", { Experiment: { usesliceTuple: true } }).useSliceTuple).toBe(true);
  expect(parseRuleOptions("r", { experiment: { useSliceTuple: "true" } }).useSliceTuple).toBe(false);
  expect(parseRuleOptions("r", null).useSliceTuple).toBe(false);
});

test("the windows' cap: windowMaxRows and windowMaxBytes, defaults, kuiper.yaml `rule:` inherited, the rule's own over it", () => {
  const d = parseRuleOptions("r", undefined);
  expect([d.windowMaxRows, d.windowMaxBytes]).toEqual([1_000_000, 256 * 1024 * 1024]);
  const y = parseRuleOptions("r", undefined, { windowMaxRows: 500, windowMaxBytes: 1024 });
  expect([y.windowMaxRows, y.windowMaxBytes]).toEqual([500, 1024]);
  const o = parseRuleOptions("r", { windowMaxRows: 0 }, { windowMaxRows: 500 });
  expect(o.windowMaxRows).toBe(0);
  expect(() => parseRuleOptions("r", { windowMaxBytes: "big" })).toThrow("json: cannot unmarshal string into Go struct field RuleOption.options.windowMaxBytes of type int");
});

test("rules giving the same options share one parsed, read-only object; different options or defaults do not; a bad option still names its rule", () => {
  const a = parseRuleOptions("r1", { qos: 0, bufferLength: 64 });
  const b = parseRuleOptions("r2", { qos: 0, bufferLength: 64 });
  expect(b).toBe(a);
  expect(Object.isFrozen(a)).toBe(true);
  expect(parseRuleOptions("r3", { qos: 1, bufferLength: 64 })).not.toBe(a);
  expect(parseRuleOptions("r4", undefined)).toBe(parseRuleOptions("r5", undefined));
  const defaults = { qos: 1 };
  const d = parseRuleOptions("r6", { bufferLength: 64 }, defaults);
  expect(d.qos).toBe(1);
  expect(d).not.toBe(parseRuleOptions("r7", { bufferLength: 64 }));
  expect(() => parseRuleOptions("r8", { restartStrategy: { attempts: -1 } })).toThrow("Rule r8 has invalid options");
  expect(() => parseRuleOptions("r9", { restartStrategy: { attempts: -1 } })).toThrow("Rule r9 has invalid options");
});
