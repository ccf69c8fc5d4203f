/** Rule JSON validation order and messages (rest-api.md §5, rules-and-sinks.md §2). */
import { expect, test } from "bun:test";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { parseStoredRule, rewriteRuleText } from "../../lib/store/stored-rule.ts";

const functions = createFunctionRegistry();

test.each([
  ['{"id":', "Parse rule {\"id\": error : unexpected end of JSON input."],
  ['{"sql":"select * from s","actions":[{"nop":{}}]}', "Missing rule id."],
  ['{"id":" r","sql":"x"}', "id ' r' contains leading or trailing whitespace"],
  ['{"id":"r","sql":"select * from s","graph":{}}', "Rule r has both sql and graph."],
  ['{"id":"r","sql":"SELECT -abc FROM demo","actions":[{"nop":{}}]}', 'found "-", expected expression.'],
  ['{"id":"r","sql":"select * from s"}', "Missing rule actions."],
  ['{"id":"r"}', "Rule r has neither sql nor graph."],
  ['{"id":"r","sql":"select * from s","actions":[{"nop":{}}],"options":{"concurrency":-1,"bufferLength":-2}}', "Rule r has invalid options: invalidConcurrency:concurrency must be greater than 0\ninvalidBufferLength:bufferLength must be greater than 0."],
  ['{"id":"r","sql":"select * from s","actions":[{"nop":{}}],"options":{"lateTolerance":1.5}}', "duration 1.5 is not an integer"],
  ['{"id":"r","sql":"select * from s","actions":[{"nop":{}}],"options":{"cronDatetimeRange":[{"begin":"2025-01-02 00:00:00","end":"2025-01-01 00:00:00"}]}}', "Rule r has invalid options: validate cronDatetimeRange failed, err:begin time shouldn't after end time."],
])("%s → %s", (text, message) => {
  expect(() => parseStoredRule(text, functions, {})).toThrow(message);
});

test("options merge over the kuiper.yaml defaults, case-insensitively", () => {
  const d = parseStoredRule('{"id":"r","sql":"select * from s","actions":[{"nop":{}}],"options":{"BUFFERLENGTH":5,"lateTolerance":"2s"}}', functions, { bufferLength: 2048, qos: 1 });
  expect([d.options.bufferLength, d.options.qos, d.options.lateTolerance, d.triggered]).toEqual([5, 1, 2000, true]);
});

test("PUT fills the id from the path and refuses a different one", () => {
  expect(parseStoredRule('{"sql":"select * from s","actions":[{"nop":{}}]}', functions, {}, "p").id).toBe("p");
  expect(() => parseStoredRule('{"id":"q","sql":"select * from s","actions":[{"nop":{}}]}', functions, {}, "p")).toThrow("RuleId is not consistent with rule id.");
});

test("rewrites re-marshal the rule as a sorted compact map", () => {
  expect(rewriteRuleText('{"id": "r", "triggered": true, "sql": "select <a>", "actions": [{"nop": {}}]}', { triggered: false })).toBe(
    '{"actions":[{"nop":{}}],"id":"r","sql":"select \\u003ca\\u003e","triggered":false}',
  );
});
