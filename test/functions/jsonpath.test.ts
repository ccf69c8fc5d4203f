import { describe, expect, test } from "bun:test";
import { call } from "./invoke-helpers.ts";
import { runFixture } from "./fixture-run.ts";
import { ctxFor } from "./env.ts";
import { invoke, lookupBuiltin } from "../../lib/functions/index.ts";

describe("JSON path functions", () => {
  runFixture("jsonpath.json");

  test("a bad path is a run-time error, compiled once per call site", () => {
    const def = lookupBuiltin("json_path_query")!;
    const ctx = ctxFor("json_path_query");
    expect(() => invoke(def, [{}, "$.["], ctx)).toThrow();
    const first = ctx.state;
    expect(() => invoke(def, [{}, "$.["], ctx)).toThrow();
    expect(ctx.state).toBe(first);
  });

  test("object members are visited in key byte order", () => {
    expect(call("json_path_query", [{ z: 1n, a: 2n, m: 3n }, "$[*]"])).toEqual([2n, 3n, 1n]);
  });
});
