/** `floe run` / `floe check` / `floe test` as a user runs them: processes, exit codes, stdout vs stderr. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const BUN = process.execPath;
const tmp = mkdtempSync(join(tmpdir(), "floe-cli-"));

function floe(args: string[], stdin = ""): { code: number; out: string; err: string } {
  const p = Bun.spawnSync([BUN, join(ROOT, "cli.ts"), ...args], { stdin: Buffer.from(stdin), cwd: ROOT });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

describe("floe run", () => {
  test("filters standard input and prints one JSON object per row", () => {
    const rule = file("hot.sql", "SELECT id, temp FROM s WHERE temp > 21.0");
    const r = floe(["run", rule], '{"id":1,"temp":20.5}\n{"id":2,"temp":22.5}\n');
    expect(r.code).toBe(0);
    expect(r.out).toBe('{"id":2,"temp":22.5}\n');
  });

  test("a line that is not JSON is reported with its line number and the rule goes on", () => {
    const rule = file("all.sql", "SELECT * FROM s");
    const r = floe(["run", rule], '{"a":1}\nnot json\n{"a":2}\n');
    expect(r.code).toBe(0);
    expect(r.out).toBe('{"a":1}\n{"a":2}\n');
    expect(r.err).toContain("line 2:");
    expect(r.err).toContain("1 record(s) lost or rejected");
  });

  test("--strict turns lost records into exit status 3", () => {
    const rule = file("all2.sql", "SELECT * FROM s");
    expect(floe(["run", rule, "--strict"], "{bad\n").code).toBe(3);
    expect(floe(["run", rule, "--strict"], '{"a":1}\n').code).toBe(0);
  });

  test("a syntax error exits 1 with eKuiper's message and the position", () => {
    const rule = file("bad.sql", 'CREATE STREAM s () WITH (FORMAT="JSON");\nSELECT *f FROM s');
    const r = floe(["run", rule], "");
    expect(r.code).toBe(1);
    expect(r.err).toContain('line 2, column 9: found "f", expected FROM.');
    expect(r.out).toBe("");
  });

  test("bad usage exits 2", () => {
    expect(floe(["run", "/nonexistent/rule.sql"]).code).toBe(2);
    expect(floe(["frobnicate"]).code).toBe(2);
    expect(floe(["run", file("x.sql", "SELECT * FROM s"), "-o", "novalue"]).code).toBe(2);
  }, 30_000);

  test("--replay --emit array prints one array per emission, windows closed by the clock", () => {
    const rule = file("win.sql", "SELECT count(*) AS n FROM s GROUP BY TUMBLINGWINDOW(ss, 10)");
    const input = [
      '{"ts":1541152480000,"data":{"a":1}}',
      '{"ts":1541152485000,"data":{"a":2}}',
      '{"ts":1541152490000,"data":{"a":3}}',
    ].join("\n");
    const r = floe(["run", rule, "--replay", "--emit", "array"], input);
    expect(r.code).toBe(0);
    // The first window [480000, 490000) holds two rows; flush at EOF closes the second.
    expect(r.out).toBe('[{"n":2}]\n[{"n":1}]\n');
    expect(floe(["run", rule, "--replay", "--emit", "array", "--on-eof", "drop"], input).out).toBe('[{"n":2}]\n');
  });

  test("-o sets rule options; --status writes eKuiper's status keys", async () => {
    const rule = file("err.sql", "SELECT a / b AS q FROM s WHERE a > 0");
    const status = join(tmp, "status.json");
    const r = floe(["run", rule, "-o", "sendError=true", "--status", status], '{"a":1,"b":0}\n');
    expect(r.out).toBe('{"error":"run Select error: alias: q expr: binaryExpr:{ s.a / s.b } meet error, err:divided by zero"}\n');
    const s = JSON.parse(await Bun.file(status).text()) as Record<string, unknown>;
    expect(s.source_s_0_records_in_total).toBe(1);
    expect(s.op_2_filter_0_records_out_total).toBe(1);
    expect(s.op_3_project_0_exceptions_total).toBe(1);
    expect(s.sink_stdout_0_0_records_in_total).toBe(1);
  });

  test.each([
    ["bufferLength=abc", "floe: json: cannot unmarshal string into Go struct field RuleOption.options.bufferLength of type int\n"],
    ["sendError=yes", "floe: json: cannot unmarshal string into Go struct field RuleOption.options.sendError of type bool\n"],
    ["concurrency=-1", "floe: Rule rule has invalid options: invalidConcurrency:concurrency must be greater than 0.\n"],
  ])("-o %s exits 1 with eKuiper's message", (option, err) => {
    const r = floe(["run", file("opt.sql", "SELECT * FROM s"), "-o", option], '{"a":1}\n');
    expect([r.code, r.out, r.err]).toEqual([1, "", err]);
  });

  test("a ts going backwards in replay is an error naming the line", () => {
    const rule = file("all3.sql", "SELECT * FROM s");
    const r = floe(["run", rule, "--replay"], '{"ts":10,"data":{"a":1}}\n{"ts":5,"data":{"a":2}}\n');
    expect(r.code).toBe(1);
    expect(r.err).toContain("line 2:");
  });

  test("basic.ignoreCase from --etc kuiper.yaml or KUIPER__BASIC__IGNORECASE makes lookups case-insensitive", () => {
    const rule = file("upper.sql", "SELECT A FROM test");
    expect(floe(["run", rule], '{"a":"x"}\n').out).toBe("{}\n");
    const etc = join(tmp, "etc");
    Bun.spawnSync(["mkdir", "-p", etc]);
    writeFileSync(join(etc, "kuiper.yaml"), "basic:\n  ignoreCase: true\n");
    expect(floe(["run", rule, "--etc", etc], '{"a":"x"}\n').out).toBe('{"A":"x"}\n');
  });

  test("--help teaches with examples", () => {
    const r = floe(["run", "--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("floe run rules/demo.sql --input fixtures/demo.jsonl");
  });
});

describe("floe check", () => {
  test("ok and error lines with positions, exit 0/1", () => {
    const good = file("good.sql", "SELECT a FROM s WHERE a > 1");
    const bad = file("bad2.sql", "CREATE STREAM s (a BIGINT) WITH ();\nSELECT b FROM s");
    const r = floe(["check", good, bad]);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`${good}: ok`);
    expect(r.out).toContain(`${bad}: unknown field b`);
    expect(floe(["check", "--parse-only", bad]).code).toBe(0);
  });
});

describe("floe test", () => {
  test("runs golden cases and ends with the summary line", () => {
    const r = floe(["test", "fixtures/golden"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\d+ passed, 0 failed\n$/);
  });

  test("a failing case shows the first mismatching emission and exits 1", () => {
    const c = file("case.json", JSON.stringify({ name: "wrong", sql: "SELECT a FROM s", input: [{ ts: 1, data: { a: 1 } }], want: [[{ a: 2 }]] }));
    const r = floe(["test", c]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('want [{"a":2}]');
    expect(r.out).toContain('got  [{"a":1}]');
    expect(r.out).toContain("0 passed, 1 failed");
  });
});
