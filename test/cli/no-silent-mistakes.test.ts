/**
 * Typos on the command line are errors, never silently ignored: a misspelt rule option, a second
 * RULE file, a configuration directory that is not there, a misspelt SQL keyword (with the caret
 * under it), and `--no-actions` keeps a graph rule's sinks from running.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const tmp = mkdtempSync(join(tmpdir(), "floe-typos-"));

function floe(args: string[], stdin = "", cwd = tmp): { code: number; out: string; err: string } {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), ...args], { stdin: Buffer.from(stdin), cwd });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

const RULE = file("a.sql", "SELECT a FROM demo");

describe("floe run refuses what it would otherwise ignore", () => {
  test("an unknown rule option names the one it is close to; nested keys too", () => {
    expect(floe(["run", RULE, "-o", "sendEror=true"])).toEqual({ code: 2, out: "", err: 'floe: unknown rule option "sendEror" (did you mean sendError?)\n' });
    expect(floe(["run", RULE, "-o", "restartStrategy.atempts=2"]).err).toBe('floe: unknown rule option "restartStrategy.atempts" (did you mean restartStrategy.attempts?)\n');
    // Go JSON matches keys case-insensitively: the spelling of a known key in another case is fine.
    expect(floe(["run", RULE, "-o", "SENDERROR=true"], '{"a":1}\n')).toEqual({ code: 0, out: '{"a":1}\n', err: "" });
  });

  test("a second RULE file is an error, not ignored", () => {
    const b = file("b.sql", "SELECT b FROM demo");
    expect(floe(["run", RULE, b])).toEqual({ code: 2, out: "", err: `floe: floe run takes one RULE file, got 2 (${RULE} ${b}); floe check takes several\n` });
  });

  test("an explicit --etc that does not exist is an error (run and serve), as is serve's -data", () => {
    expect(floe(["run", RULE, "--etc", "/nonexistent"])).toEqual({ code: 2, out: "", err: "floe: --etc /nonexistent: no such directory\n" });
    expect(floe(["serve", "-etc", "/nonexistent"])).toEqual({ code: 2, out: "", err: "floe: -etc /nonexistent: no such directory\n" });
    expect(floe(["serve", "--data", join(tmp, "nodata")])).toEqual({ code: 2, out: "", err: `floe: -data ${join(tmp, "nodata")}: no such directory (create it first: mkdir -p ${join(tmp, "nodata")})\n` });
  });

  test("a misspelt keyword is suggested with the caret under it, in run and check", () => {
    const bad = file("wher.sql", "SELECT a FROM demo WHER a > 1");
    const where = `  at ${bad}:1:20\n  1 | SELECT a FROM demo WHER a > 1\n    |                    ^^^^\n  did you mean WHERE? (a keyword)\n`;
    expect(floe(["check", bad])).toEqual({ code: 1, out: `${bad}:1:27: found ">", expected EOF.\n${where}`, err: "" });
    expect(floe(["run", bad], '{"a":1}\n')).toEqual({ code: 1, out: "", err: `floe: line 1, column 27: found ">", expected EOF.\n${where}` });
    // A declared column of four letters one edit from a keyword is not taken for one.
    const col = file("col.sql", 'CREATE STREAM demo (form bigint) WITH (TYPE="stdin"); SELECT form FROM demo WHERE form >');
    expect(floe(["check", col]).out).not.toContain("did you mean");
  });
});

describe("--no-actions with a graph rule", () => {
  const dir = join(ROOT, "fixtures/graph");
  const rule = (out: string) =>
    file(
      "graph-sink.json",
      JSON.stringify({
        id: "g",
        graph: {
          nodes: {
            demo: { type: "source", nodeType: "file", props: { datasource: "iot.json" } },
            out: { type: "sink", nodeType: "file", props: { path: out } },
          },
          topo: { sources: ["demo"], edges: { demo: ["out"] } },
        },
      }),
    );

  test("prints the rows its sinks receive and runs none of them", () => {
    const muted = join(tmp, "muted.txt");
    const r = floe(["run", rule(muted), "--no-actions"], "", dir);
    expect(r.code).toBe(0);
    expect(r.out.trim().split("\n").length).toBeGreaterThan(0);
    expect(existsSync(muted)).toBe(false);
    // Without the flag the same rule writes its file sink.
    const written = join(tmp, "written.txt");
    const w = floe(["run", rule(written)], "", dir);
    expect(w.code).toBe(0);
    expect(readFileSync(written, "utf8")).toContain("humidity");
  });
});
