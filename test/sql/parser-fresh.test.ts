/** The committed parser (generated/sql/parser.js) is generated from lib/sql/grammar.peggy; this fails when it is stale. */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { tmpdir } from "node:os";

test("generated/sql/parser.js matches lib/sql/grammar.peggy (run `make parser` if not)", async () => {
  const root = join(import.meta.dir, "../..");
  const out = join(tmpdir(), `floe-parser-${process.pid}.js`);
  const proc = Bun.spawnSync([join(root, "node_modules/.bin/peggy"), "--format", "es", "--allowed-start-rules", "Statement,SelectStatement,CreateStatement", "-o", out, join(root, "lib/sql/grammar.peggy")]);
  expect(proc.exitCode).toBe(0);
  const fresh = await Bun.file(out).text();
  const committed = await Bun.file(join(root, "generated/sql/parser.js")).text();
  expect(fresh === committed).toBe(true);
});
