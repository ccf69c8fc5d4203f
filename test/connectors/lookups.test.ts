/** The lookup registry (connectors/lookups.ts): which TYPEs open a lookup table, and opening one without a runtime env. */
import { expect, test } from "bun:test";
import { createLookupEnv, createLookupSource, openLookupTable } from "../../lib/connectors/lookups.ts";
import { createNetGuard } from "../../lib/net/guard.ts";
import { streamDef } from "../../lib/plan/streams.ts";
import { parseStatement } from "../../lib/sql/parse.ts";
import type { CreateStatement } from "../../lib/sql/ast.ts";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { createRuntimeEnv } from "../../lib/runtime/env.ts";

test("an unknown lookup type is not supported", () => {
  const env = createRuntimeEnv({ log: () => {} });
  expect(() => createLookupSource("mqtt", {}, env)).toThrow("lookup source type mqtt is not supported");
});

test("a host without a runtime env opens a lookup table with createLookupEnv: its own pub/sub feeds a memory table", async () => {
  const env = createLookupEnv({ etcDir: undefined, baseDir: process.cwd(), outbound: createNetGuard(), log: () => {} });
  const c = parseStatement('CREATE TABLE t () WITH (TYPE="memory", DATASOURCE="lenv/t", KIND="lookup", KEY="id")', createFunctionRegistry()) as CreateStatement;
  const table = await openLookupTable(streamDef(c), env);
  await env.pubsub.publish("lenv/t", { id: 1n, v: "a" });
  expect(await table.lookup(["id"], [1n])).toEqual([{ id: 1n, v: "a" }]);
  await table.close();
});
