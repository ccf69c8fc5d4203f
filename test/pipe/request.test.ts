/** Which streams pipe mode feeds from standard input: one answer for both runners. */
import { expect, test } from "bun:test";
import { isStdin } from "../../lib/pipe/request.ts";
import type { StreamDef } from "../../lib/plan/streams.ts";

const def = (kind: "stream" | "table", options: Record<string, string>): StreamDef => ({ name: "s", kind, fields: null, options, statement: "" });

test("a stream without TYPE or with TYPE stdin reads standard input; a connector stream does not", () => {
  expect(isStdin(def("stream", {}))).toBe(true);
  expect(isStdin(def("stream", { TYPE: "STDIN" }))).toBe(true);
  expect(isStdin(def("stream", { TYPE: "mqtt", DATASOURCE: "t/#" }))).toBe(false);
  expect(isStdin(def("stream", { TYPE: "file" }))).toBe(false);
});

test("a file table without DATASOURCE reads standard input; with one it reads its file", () => {
  expect(isStdin(def("table", { TYPE: "file" }))).toBe(true);
  expect(isStdin(def("table", { TYPE: "file", DATASOURCE: "devices.json" }))).toBe(false);
  expect(isStdin(def("table", { TYPE: "memory", DATASOURCE: "d", KIND: "lookup" }))).toBe(false);
});
