/** Errors for people: eKuiper's message, then file:line:col, the line with a caret, and "did you mean". */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { explain } from "../../lib/cli/where.ts";
import { UTC } from "../../lib/value/time.ts";
import { planSelect } from "../../lib/plan/plan.ts";
import { streamDef } from "../../lib/plan/streams.ts";
import { parseRuleFile } from "../../lib/sql/parse.ts";

const ROOT = join(import.meta.dir, "../..");
const tmp = mkdtempSync(join(tmpdir(), "floe-diag-"));

function errorOf(sql: string): unknown {
  try {
    const functions = createFunctionRegistry();
    const f = parseRuleFile(sql, functions);
    planSelect(f.select, new Map(f.creates.map((c) => [c.name, streamDef(c)])), { env: { now: () => 0, zone: UTC, ruleId: "t", ruleStart: 0 }, zone: UTC, functions });
  } catch (e) {
    return e;
  }
  throw new Error("no error");
}

const CREATE = 'CREATE STREAM telem (temperature FLOAT, humidity BIGINT) WITH (FORMAT="JSON");\n';

describe("explain", () => {
  test("an unknown column: its position found in the SELECT, and the nearest column", () => {
    const sql = CREATE + "SELECT temprature FROM telem WHERE humidity > 1";
    expect(explain(errorOf(sql), { file: "r.sql", sql })).toBe(
      "  at r.sql:2:8\n  2 | SELECT temprature FROM telem WHERE humidity > 1\n    |        ^^^^^^^^^^\n  did you mean temperature? (a column)\n",
    );
  });

  test("an unknown function: the caret under its name, the nearest function", () => {
    const sql = CREATE + "SELECT roud(temperature) FROM telem";
    expect(explain(errorOf(sql), { file: "r.sql", sql })).toBe("  at r.sql:2:8\n  2 | SELECT roud(temperature) FROM telem\n    |        ^^^^\n  did you mean round? (a function)\n");
  });

  test("a misspelt keyword", () => {
    const sql = CREATE + "SELECT temperature FORM telem";
    const out = explain(errorOf(sql), { file: "r.sql", sql });
    expect(out).toContain("  at r.sql:2:20\n");
    expect(out).toContain("did you mean FROM? (a keyword)");
  });

  test("an unknown stream", () => {
    const sql = CREATE + "SELECT temperature FROM telen";
    expect(explain(errorOf(sql), { file: "r.sql", sql })).toContain("  at r.sql:2:25\n  2 | SELECT temperature FROM telen\n    |                         ^^^^^\n  did you mean telem? (a stream)\n");
  });

  test("a word inside a string is not taken for the column", () => {
    const sql = CREATE + "SELECT 'temprature' AS t, temprature FROM telem";
    expect(explain(errorOf(sql), { file: "r.sql", sql })).toContain("  at r.sql:2:27\n");
  });
});

function floe(args: string[], stdin = ""): { code: number; out: string; err: string } {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), ...args], { stdin: Buffer.from(stdin), cwd: ROOT });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

describe("floe run and floe check show where", () => {
  test("floe run: eKuiper's message first, then the place", () => {
    const rule = file("bad.sql", CREATE + "SELECT temprature FROM telem;\n");
    const r = floe(["run", rule]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`floe: unknown field temprature\n  at ${rule}:2:8\n  2 | SELECT temprature FROM telem;\n    |        ^^^^^^^^^^\n  did you mean temperature? (a column)\n`);
  });

  test("floe check takes rule .json files, with --streams ending in `;`, and exits 1 on any error", () => {
    const streams = file("streams.sql", CREATE + "\n");
    const good = file("good.json", JSON.stringify({ id: "g", sql: "SELECT temperature FROM telem", actions: [{ log: {} }] }));
    const bad = file("bad.json", JSON.stringify({ id: "b", sql: "SELECT humdity FROM telem", actions: [] }));
    const broken = file("broken.json", "{");
    const r = floe(["check", "--streams", streams, good, bad, broken]);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`${good}: ok\n`);
    expect(r.out).toContain(`${bad} (sql): unknown field humdity\n  at ${bad} (sql):1:8\n`);
    expect(r.out).toContain("did you mean humidity? (a column)");
    expect(r.out).toContain(`${broken}: not valid JSON`);
    expect(floe(["check", "--streams", streams, good]).code).toBe(0);
  }, 30_000);

  test("floe run --streams FILE ending in `;` works; a syntax error there is shown in that file", () => {
    const streams = file("s2.sql", CREATE);
    const rule = file("r.json", JSON.stringify({ id: "r", sql: "SELECT temperature FROM telem", actions: [] }));
    expect(floe(["run", rule, "--streams", streams], '{"temperature":1.5}\n').out).toBe('{"temperature":1.5}\n');
    const broken = file("s3.sql", CREATE + 'CREATE STREAM q (a BIGINT) WITH FORMAT="JSON");\n');
    const r = floe(["run", rule, "--streams", broken]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`  at ${broken}:2:33\n`);
  }, 30_000);
});
