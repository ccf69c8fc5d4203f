/** Which sinks share their outputs and payloads (sink/shared-encoding.ts): alike in all that shapes a payload. */
import { expect, test } from "bun:test";
import { parseSinkCommon } from "../../lib/sink/common.ts";
import { encodingKey } from "../../lib/sink/shared-encoding.ts";

const key = (props: Record<string, unknown>, bytes = true, templated: Record<string, unknown> | null = null) => encodingKey(parseSinkCommon(props), bytes, false, templated);

test("sinks differing only in where they send share a key; what shapes the payload gives another", () => {
  // A topic or a path is not part of the payload.
  expect(key({ topic: "a/1" })).toBe(key({ topic: "b/2", server: "tcp://x:1883" })!);
  expect(key({})).toBeDefined();
  expect(key({ sendSingle: true })).not.toBe(key({}));
  expect(key({ dataTemplate: "{{.a}}" })).not.toBe(key({ dataTemplate: "{{.b}}" }));
  expect(key({ fields: ["a"] })).not.toBe(key({ fields: ["b"] }));
  expect(key({}, false)).not.toBe(key({}, true));
  // Templated properties are rendered into each output: they count.
  expect(key({}, true, { topic: "t/{{.d}}" })).not.toBe(key({}, true, { topic: "u/{{.d}}" }));
});

test("a sink whose payloads are its own shares nothing: batches, a stateful or registry-bound format, a template of the clock or chance", () => {
  expect(key({ batchSize: 10 })).toBeUndefined();
  expect(key({ lingerInterval: 100 })).toBeUndefined();
  expect(key({ format: "delimited" })).toBeUndefined();
  expect(key({ format: "protobuf", schemaId: "s.M" })).toBeUndefined();
  expect(key({ dataTemplate: '{"at":"{{now}}"}' })).toBeUndefined();
  expect(key({ dataTemplate: '{"id":"{{uuidv4}}"}' })).toBeUndefined();
  expect(encodingKey(parseSinkCommon({}), true, true, null)).toBeUndefined();
});
