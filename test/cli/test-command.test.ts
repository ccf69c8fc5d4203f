/** `floe test` for CI: strict case keys, declared divergences, --update, TAP and JUnit, the shared vectors by path. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveCasePath } from "../../lib/cli/test.ts";
import { sharedDir } from "../helpers/shared.ts";

const ROOT = join(import.meta.dir, "../..");
const tmp = mkdtempSync(join(tmpdir(), "floe-test-cmd-"));

function floe(args: string[], cwd = ROOT): { code: number; out: string; err: string } {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), "test", ...args], { cwd });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

function caseFile(name: string, v: unknown): string {
  const p = join(tmp, name);
  writeFileSync(p, JSON.stringify(v, null, 2));
  return p;
}

const ok = { name: "passes", sql: "SELECT a FROM s", input: [{ ts: 1, data: { a: 1 } }], want: [[{ a: 1 }]] };

describe("floe test", () => {
  test("a misspelt key fails the case with the key it meant", () => {
    const f = caseFile("typo.json", { name: "typo", sql: "SELECT a FROM s", inputs: [{ ts: 1, data: { a: 1 } }], expected: [] });
    const r = floe([f]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('unknown key "inputs" (did you mean input?) (fixtures/README.md lists the keys)');
    expect(r.out).toContain("0 passed, 1 failed");
  }, 30_000);

  test('"divergence" expects the case to fail; once it passes it is a failure', () => {
    const known = caseFile("known.json", [ok, { ...ok, name: "differs", want: [[{ a: 2 }]], divergence: "eKuiper says 2" }]);
    const r = floe([known]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("1 passed, 0 failed, 1 known divergence(s)");
    const fixed = caseFile("fixed.json", { ...ok, divergence: "no longer" });
    const r2 = floe([fixed]);
    expect(r2.code).toBe(1);
    expect(r2.out).toContain("known divergence now passes: remove it (no longer)");
  }, 30_000);

  test("--update writes want from the rule's emissions", () => {
    const f = caseFile("new.json", [{ name: "new", sql: "SELECT a * 2 AS b FROM s", input: [{ ts: 1, data: { a: 1 } }, { ts: 2, data: { a: 5 } }] }]);
    expect(floe([f]).code).toBe(1);
    const r = floe(["--update", f]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`updated ${f}`);
    expect((JSON.parse(readFileSync(f, "utf8")) as { want: unknown }[])[0]!.want).toEqual([[{ b: 2 }], [{ b: 10 }]]);
    expect(floe([f]).code).toBe(0);
  }, 30_000);

  test("--reporter tap and junit", () => {
    const f = caseFile("mixed.json", [ok, { ...ok, name: "bad <one>", want: [[{ a: 3 }]] }, { ...ok, name: "known", want: [], divergence: "why" }]);
    const tap = floe(["--reporter", "tap", f]);
    expect(tap.code).toBe(1);
    expect(tap.out).toStartWith("TAP version 13\n1..3\nok 1 - ");
    expect(tap.out).toContain("not ok 2 - ");
    expect(tap.out).toContain("# TODO known divergence: why");
    const junit = floe(["--reporter", "junit", f]);
    expect(junit.out).toStartWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="floe test" tests="3" failures="1"');
    expect(junit.out).toContain('name="passes passes"'.replace("passes passes", `${f} passes`));
    expect(junit.out).toContain("bad &lt;one&gt;");
    expect(junit.out).toContain("<skipped message=\"known divergence: why\"/>");
  }, 30_000);

  test("../shared/conformance resolves to the shared directory from any clone", () => {
    const shared = sharedDir();
    expect(resolveCasePath("../shared/conformance", { FLOE_SHARED_DIR: shared }, tmp)).toBe(join(shared, "conformance"));
    expect(resolveCasePath("fixtures/golden", {}, ROOT)).toBe(join(ROOT, "fixtures/golden"));
  });

  test("the README's command: fixtures/golden and the conformance vectors pass, known divergences listed", () => {
    const r = floe(["--quiet", "fixtures/golden", "../shared/conformance"]);
    expect(r.err).toBe("");
    expect(r.out).toMatch(/^\d+ passed, 0 failed, 5 known divergence\(s\)\n$/);
    expect(r.code).toBe(0);
  }, 120_000);
});
