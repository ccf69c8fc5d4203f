/** `floe run` with lookup tables (sql.md §12.5): a stdin stream joined with a simulator lookup table. */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const tmp = mkdtempSync(join(tmpdir(), "floe-cli-lookup-"));

function floe(args: string[], stdin: string): { code: number; out: string; err: string } {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), "run", ...args], { stdin: Buffer.from(stdin), cwd: tmp });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

const TABLE = `CREATE TABLE dev () WITH (TYPE="simulator", KIND="lookup", EXTRA="{\\"data\\":[{\\"id\\":1,\\"name\\":\\"pump\\"},{\\"id\\":2,\\"name\\":\\"fan\\"},{\\"id\\":2,\\"name\\":\\"fan2\\"}]}")`;
const INPUT = '{"id":1,"t":20}\n{"id":2,"t":21}\n{"id":3,"t":22}\n';

test("a lookup table in the .sql file: one joined row per table row, LEFT keeps the unmatched", () => {
  const rule = file("left.sql", `CREATE STREAM s () WITH (TYPE="stdin");\n${TABLE};\nSELECT s.id, t, dev.name FROM s LEFT JOIN dev ON s.id = dev.id`);
  const r = floe([rule], INPUT);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  expect(r.out).toBe('{"id":1,"name":"pump","t":20}\n{"id":2,"name":"fan","t":21}\n{"id":2,"name":"fan2","t":21}\n{"id":3,"t":22}\n');
});

test("a lookup table given with --streams; the stdin stream needs no CREATE; replay works on the virtual clock", () => {
  const streams = file("tables.sql", TABLE);
  const rule = file("inner.sql", "SELECT * FROM s INNER JOIN dev ON dev.id = s.id WHERE dev.name != \"fan2\"");
  const r = floe([rule, "--streams", streams], INPUT);
  expect(r.code).toBe(0);
  expect(r.out).toBe('{"id":1,"name":"pump","t":20}\n{"id":2,"name":"fan","t":21}\n');
  const replay = floe([rule, "--streams", streams, "--replay"], '{"ts":10,"data":{"id":2}}\n{"ts":20,"data":{"id":1}}\n');
  expect(replay.code).toBe(0);
  expect(replay.out).toBe('{"id":2,"name":"fan"}\n{"id":1,"name":"pump"}\n');
});

test("a lookup join without an equality on the table fails with eKuiper's plan error", () => {
  const rule = file("bad.sql", `${TABLE};\nSELECT * FROM s INNER JOIN dev ON s.id > dev.id`);
  const r = floe([rule], INPUT);
  expect(r.code).toBe(1);
  expect(r.err).toContain("join condition binaryExpr:{ s.id > dev.id } is invalid, at least one equi-join predicate is required");
});
