/**
 * The committed parser (generated/sql/parser.js) is generated from the grammar files of lib/sql/grammar/;
 * this fails when it is stale. The files and start rules are the Makefile's (`GRAMMAR`, `PARSER_RULES`),
 * so `make parser` and this test cannot disagree on them.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";

const root = join(import.meta.dir, "../..");
const makefile = readFileSync(join(root, "Makefile"), "utf8");

function makeVar(name: string): string {
  const m = new RegExp(`^${name} := (.+)$`, "m").exec(makefile);
  if (!m) throw new Error(`Makefile: no line \`${name} := …\``);
  return m[1]!.trim();
}

const grammar = makeVar("GRAMMAR").split(/\s+/);

test("the Makefile's GRAMMAR lists every grammar file of lib/sql/grammar/", () => {
  const files = readdirSync(join(root, "lib/sql/grammar")).filter((f) => f.endsWith(".peggy")).map((f) => `lib/sql/grammar/${f}`);
  expect([...grammar].sort()).toEqual(files.sort());
});

test("generated/sql/parser.js matches lib/sql/grammar/ (run `make parser` if not)", async () => {
  const out = join(tmpdir(), `floe-parser-${process.pid}.js`);
  const args = ["--format", "es", "--allowed-start-rules", makeVar("PARSER_RULES"), "-o", out, ...grammar.map((f) => join(root, f))];
  const proc = Bun.spawnSync([join(root, "node_modules/.bin/peggy"), ...args]);
  expect(proc.exitCode).toBe(0);
  const fresh = await Bun.file(out).text();
  const committed = await Bun.file(join(root, "generated/sql/parser.js")).text();
  expect(fresh === committed).toBe(true);
});
