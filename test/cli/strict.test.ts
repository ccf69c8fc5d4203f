/** A strict, quiet command line: usage errors are one line and exit 2, EPIPE is quiet, help teaches. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KUIPER_VERBS } from "../../lib/cli/kuiper/index.ts";
import { closest, editDistance } from "../../lib/plan/suggest.ts";
import { useColor } from "../../lib/cli/help.ts";

const ROOT = join(import.meta.dir, "../..");
const tmp = mkdtempSync(join(tmpdir(), "floe-strict-"));

function floe(args: string[], env: Record<string, string> = {}, stdin = ""): { code: number; out: string; err: string } {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), ...args], { stdin: Buffer.from(stdin), cwd: ROOT, env: { ...process.env, ...env } });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

function oneLineUsage(r: { code: number; out: string; err: string }, text: string): void {
  expect(r.code).toBe(2);
  expect(r.out).toBe("");
  expect(r.err).toBe(`floe: ${text}\n`);
}

describe("usage errors: one line on stderr, exit 2", () => {
  test("an unknown flag is rejected with the nearest one", () => {
    oneLineUsage(floe(["run", "rules/demo.sql", "--inptu", "f"]), "unknown flag --inptu for floe run (did you mean --input?)");
    oneLineUsage(floe(["run", "rules/demo.sql", "--frobnicate"]), "unknown flag --frobnicate for floe run (floe run --help lists them)");
    oneLineUsage(floe(["test", "--quite"]), "unknown flag --quite for floe test (did you mean --quiet?)");
  }, 30_000);

  test("serve rejects unknown flags too, before it starts", () => {
    oneLineUsage(floe(["serve", "--port", "42001"]), "unknown flag --port for floe serve (floe serve --help lists them)");
    oneLineUsage(floe(["serve", "-dta", "x"]), "unknown flag -dta for floe serve (did you mean --data?)");
  }, 30_000);

  test("a bad enum value, a missing value, a missing argument, an unknown command", () => {
    oneLineUsage(floe(["run", "rules/demo.sql", "--emit", "csv"]), '--emit must be one of rows, array (got "csv")');
    oneLineUsage(floe(["run", "rules/demo.sql", "--input"]), "--input needs a value FILE");
    oneLineUsage(floe(["run"]), "missing RULE for floe run (floe run --help shows examples)");
    oneLineUsage(floe(["rnu"]), 'unknown command "rnu" (did you mean run?) (floe --help lists them)');
    oneLineUsage(floe(["run", "rules/demo.sql", "--input", "/nonexistent.jsonl"]), "cannot read input /nonexistent.jsonl: no such file");
  }, 30_000);

  test("no command prints the overview on stderr and exits 2", () => {
    const r = floe([]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toContain("Usage: floe <command>");
  });
});

describe("failures", () => {
  test("a failure is one line without a stack; FLOE_DEBUG=1 adds the stack", () => {
    const rule = join(tmp, "r.json");
    writeFileSync(rule, JSON.stringify({ id: "r", sql: "SELECT * FROM s", actions: [] }));
    const r = floe(["run", rule, "--input", tmp]);
    expect(r.code).toBe(1);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).not.toContain("    at ");
  });

  test("EPIPE: `floe run … | head -1` ends quietly with 0", () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `{"a":${i}}`).join("\n");
    const input = join(tmp, "many.jsonl");
    writeFileSync(input, lines);
    const sql = join(tmp, "all.sql");
    writeFileSync(sql, "SELECT * FROM s");
    for (const feed of [`--input ${input}`, `< ${input}`]) {
      const p = Bun.spawnSync(["bash", "-c", `set -o pipefail; "${process.execPath}" cli.ts run ${sql} ${feed} | head -1`], { cwd: ROOT });
      expect(p.stdout.toString()).toBe('{"a":0}\n');
      expect(p.stderr.toString()).toBe("");
      expect(p.exitCode).toBe(0);
    }
  }, 30_000);
});

describe("help", () => {
  test("plain text into a pipe, never wider than 120 columns at the top level", () => {
    const r = floe(["--help"]);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain("\x1b[");
    expect(Math.max(...r.out.split("\n").map((l) => l.length))).toBeLessThanOrEqual(120);
    for (const v of ["run", "test", "check", "serve", "completion", ...KUIPER_VERBS]) expect(r.out).toContain(`  ${v} `);
  });

  test("FORCE_COLOR colours it; NO_COLOR wins over everything", () => {
    expect(floe(["--help"], { FORCE_COLOR: "1" }).out).toContain("\x1b[1m");
    expect(floe(["--help"], { FORCE_COLOR: "1", NO_COLOR: "" }).out).not.toContain("\x1b[");
    expect(useColor(true, {})).toBe(true);
    expect(useColor(true, { NO_COLOR: "1" })).toBe(false);
    expect(useColor(false, {})).toBe(false);
  });

  // Every command's help has examples, works without a server and equals `floe help CMD`: checked
  // in lazy-load.test.ts, which runs each command's help from cli.ts and the executable anyway.

  test("the kuiper verbs' help says how to reach another port", () => {
    expect(floe(["show", "--help"]).out).toContain("CLIENT__BASIC__PORT");
  });
});

describe("completion", () => {
  test("bash, zsh and fish scripts name the commands and flags; bash's parses", () => {
    for (const sh of ["bash", "zsh", "fish"]) {
      const r = floe(["completion", sh]);
      expect(r.code).toBe(0);
      expect(r.out).toContain("serve");
      expect(r.out).toContain("input");
    }
    const bash = floe(["completion", "bash"]).out;
    const p = Bun.spawnSync(["bash", "-n"], { stdin: Buffer.from(bash) });
    expect(p.exitCode).toBe(0);
    oneLineUsage(floe(["completion", "tcsh"]), 'floe completion: unknown shell "tcsh" (bash, zsh or fish)');
  }, 30_000);
});

describe("did you mean", () => {
  test("edit distance counts a transposition as one", () => {
    expect(editDistance("inptu", "input")).toBe(1);
    expect(editDistance("temprature", "temperature")).toBe(1);
  });
  test("only close candidates are suggested", () => {
    expect(closest("--inptu", ["--input", "--emit"])).toBe("--input");
    expect(closest("xyz", ["--input"])).toBeUndefined();
  });
});
