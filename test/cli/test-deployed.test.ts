/**
 * `floe test` on the rule as deployed: cases beside an MQTT-typed rule run with no broker (its
 * streams are fed from the case's input), the current directory is the default, failures point
 * at the emission, row and field, `--update` rewrites only `want`, reports use relative names.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

function floe(args: string[], cwd: string): { code: number; out: string; err: string } {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), ...args], { cwd });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** A project as deployed: rules/ with an MQTT stream, a rule .json, and cases beside them. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "floe-deployed-"));
  mkdirSync(join(dir, "rules"));
  const w = (p: string, t: string) => writeFileSync(join(dir, p), t);
  w("rules/hot.sql", 'CREATE STREAM telem (device string, temperature float) WITH (TYPE="mqtt", DATASOURCE="telem/#", FORMAT="json");\nSELECT device, temperature FROM telem WHERE temperature > 30');
  w("rules/streams.sql", 'CREATE STREAM telem (device string, temperature float) WITH (TYPE="mqtt", DATASOURCE="telem/#");');
  w("rules/hot.json", JSON.stringify({ id: "hot", sql: "SELECT device FROM telem WHERE temperature > 30", actions: [{ mqtt: { server: "tcp://127.0.0.1:1", topic: "alerts" } }] }));
  w(
    "rules/hot.case.json",
    `{
  "name": "hot readings only",
  "rule": "hot.sql",
  "input": [
    {"ts": 1, "stream": "telem", "data": {"device": "d1", "temperature": 31.5}},
    {"ts": 2, "stream": "telem", "data": {"device": "d2", "temperature": 20}}
  ],
  "want": [
    [{"device": "d1", "temperature": 31.5}]
  ]
}
`,
  );
  w("rules/hot-json.case.json", JSON.stringify([{ name: "the rule .json as deployed", rule: "hot.json", streams: "streams.sql", input: [{ ts: 1, data: { device: "d3", temperature: 40 } }], want: [[{ device: "d3" }]] }]));
  w("package.json", JSON.stringify({ name: "not a case" }));
  return dir;
}

describe("floe test on the deployed rule", () => {
  test("with no argument it runs the cases under the current directory; MQTT streams need no broker", () => {
    const dir = project();
    const r = floe(["test"], dir);
    expect(r.err).toBe("");
    expect(r.out).toBe("ok   rules/hot-json.case.json the rule .json as deployed\nok   rules/hot.case.json hot readings only\n2 passed, 0 failed\n");
    expect(r.code).toBe(0);
  });

  test("a failure shows the emission, row and field that differ, with expected and got", () => {
    const dir = project();
    const f = join(dir, "rules/hot.case.json");
    writeFileSync(f, readFileSync(f, "utf8").replace('"temperature": 31.5}]', '"temperature": 32}]'));
    const r = floe(["test", "rules"], dir);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'FAIL rules/hot.case.json hot readings only\n  emission 0, row 0, field "temperature": want 32, got 31.5\n    want [{"device":"d1","temperature":32}]\n    got  [{"device":"d1","temperature":31.5}]\n',
    );
  });

  test("--update rewrites only `want`, keeping the case's layout", () => {
    const dir = project();
    const f = join(dir, "rules/hot.case.json");
    const before = readFileSync(f, "utf8");
    writeFileSync(f, before.replace('"temperature": 20}}', '"temperature": 35}}'));
    const r = floe(["test", "--update", "rules/hot.case.json"], dir);
    expect(r.code).toBe(0);
    expect(r.out).toContain("updated rules/hot.case.json\n");
    const after = readFileSync(f, "utf8");
    expect(after).toBe(
      before
        .replace('"temperature": 20}}', '"temperature": 35}}')
        .replace('[\n    [{"device": "d1", "temperature": 31.5}]\n  ]', '[\n    [{"device": "d1", "temperature": 31.5}],\n    [{"device": "d2", "temperature": 35}]\n  ]'),
    );
    expect(floe(["test", "rules/hot.case.json"], dir).code).toBe(0);
  });

  test("--update adds a missing `want` in the style of the input", () => {
    const dir = project();
    const f = join(dir, "new.json");
    writeFileSync(f, `[\n\t{\n\t\t"name": "new",\n\t\t"sql": "SELECT a * 2 AS b FROM s",\n\t\t"input": [{"ts": 1, "data": {"a": 1}}]\n\t}\n]\n`);
    expect(floe(["test", "--update", "new.json"], dir).code).toBe(0);
    expect(readFileSync(f, "utf8")).toBe(`[\n\t{\n\t\t"name": "new",\n\t\t"sql": "SELECT a * 2 AS b FROM s",\n\t\t"input": [{"ts": 1, "data": {"a": 1}}],\n\t\t"want": [[{"b": 2}]]\n\t}\n]\n`);
  });

  test("JUnit and TAP name files relative to the working directory and carry the first difference as message", () => {
    const dir = project();
    const f = join(dir, "rules/hot.case.json");
    writeFileSync(f, readFileSync(f, "utf8").replace('"d1", "temperature": 31.5}]', '"d9", "temperature": 31.5}]'));
    const junit = floe(["test", "--reporter", "junit"], dir);
    expect(junit.out).not.toContain(dir);
    expect(junit.out).toContain('<testsuite name="rules/hot.case.json"');
    expect(junit.out).toContain('<failure message="emission 0, row 0, field &quot;device&quot;: want &quot;d9&quot;, got &quot;d1&quot;">');
    const tap = floe(["test", "--reporter", "tap"], dir);
    expect(tap.out).toContain('not ok 2 - rules/hot.case.json hot readings only\n  ---\n  message: "emission 0, row 0, field \\"device\\": want \\"d9\\", got \\"d1\\"');
    expect(tap.out).toContain('  file: "rules/hot.case.json"');
  });

  test("floe run --replay on a connector stream names the stream, and floe test", () => {
    const dir = project();
    const r = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), "run", "rules/hot.sql", "--replay"], { cwd: dir, stdin: Buffer.from('{"ts":1,"data":{}}\n') });
    expect(r.exitCode).toBe(1);
    expect(r.stderr.toString()).toBe(
      'floe: --replay feeds stdin streams from envelopes on a virtual clock, but the rule reads telem (TYPE="mqtt") from its connector; drop --replay to run it live, or test it with floe test, which feeds every stream from the case\'s input\n',
    );
  });

  test("a directory with no case file is an error", () => {
    const dir = mkdtempSync(join(tmpdir(), "floe-nocases-"));
    expect(floe(["test"], dir)).toEqual({ code: 2, out: "", err: "floe: no case files under the current directory (fixtures/README.md shows one)\n" });
  });
});
