/**
 * The kuiper command grammar against a running `floe serve` (config-and-cli.md §8): the same
 * output strings, through `floe <verb>` and through the binary invoked as `kuiper`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFloe, tempHome, type DaemonProc } from "../../server/daemon.ts";

const ROOT = join(import.meta.dir, "..", "..", "..");
let d: DaemonProc;
let dir: string;

beforeAll(async () => {
  dir = tempHome();
  d = await startFloe(dir);
  writeFileSync(join(dir, "etc", "client.yaml"), `basic:\n  host: 127.0.0.1\n  port: ${d.cliPort}\n`);
});

afterAll(async () => {
  await d?.stop();
});

/**
 * The binary invoked as `kuiper` (argv[0], as a `kuiper` symlink to the executable gives it):
 * eKuiper's CLI exactly, every line on stdout and exit 0.
 */
async function floe(...args: string[]): Promise<string> {
  const p = Bun.spawn([process.execPath, join(ROOT, "cli.ts"), ...args], { cwd: dir, stdout: "pipe", stderr: "pipe", argv0: join(dir, "bin", "kuiper") });
  const out = await new Response(p.stdout).text();
  expect(await p.exited).toBe(0);
  return out;
}

/** `floe <verb>`: results on stdout, the rest on stderr, and an exit status. */
async function floeVerb(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn([process.execPath, join(ROOT, "cli.ts"), ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, out, err };
}

const HEAD = () => `Connecting to 127.0.0.1:${d.cliPort}... \n`;

test("stream verbs send the command line as SQL", async () => {
  expect(await floe("create", "stream", "demo", '(temperature float, humidity bigint) WITH (FORMAT="JSON", DATASOURCE="demo")')).toBe(HEAD() + "Stream demo is created.\n\n");
  expect(await floe("show", "streams")).toBe(HEAD() + "demo\n\n");
  expect(await floe("describe", "stream", "demo")).toBe(
    HEAD() + "Fields\n" + "-".repeat(80) + "\ntemperature\tfloat\nhumidity\tbigint\n\nDATASOURCE: demo\nFORMAT: JSON\n\n",
  );
  expect(await floe("create", "stream", "demo", '() WITH (DATASOURCE="x")')).toBe(HEAD() + "Stream command error: Create stream fails: Item demo already exists.\n");
  expect(await floe("show", "tables")).toBe(HEAD() + "No table definitions are found.\n\n");
});

test("rule verbs print eKuiper's sentences", async () => {
  expect(await floe("create", "rule", "r1", '{"sql":"SELECT * FROM demo","actions":[{"nop":{}}]}')).toBe(
    HEAD() + "Rule r1 was created successfully, please use 'bin/kuiper getstatus rule r1' command to get rule status.\n",
  );
  expect(await floe("create", "rule", "r2", '{"sql":"SELECT * FROM demo"}')).toBe(HEAD() + "Create rule r2 error : invalid rule json: Missing rule actions..\n");
  expect(await floe("create", "rule", "r3")).toBe(HEAD() + "Expect rule name and json.\nBut found 1 args:[r3].\n");
  expect(await floe("stop", "rule", "r1")).toBe(HEAD() + "Rule r1 was stopped.\n");
  expect(await floe("start", "rule", "r1")).toBe(HEAD() + "Rule r1 was started\n");
  expect(await floe("restart", "rule", "r1")).toBe(HEAD() + "Rule r1 was restarted.\n");
  expect(await floe("start", "rule", "nope")).toBe(HEAD() + "Rule nope is not found in registry, please check if it is created\n");
  expect((await floe("getstatus", "rule", "r1")).split("\n").slice(1, 3)).toEqual(["{", '  "status": "running",']);
  expect(await floe("validate", "rule", "r9", '{"sql":"SELECT * FROM demo","actions":[{"nop":{}}]}')).toBe(HEAD() + "The rule has been successfully validated and is confirmed to be correct.\n");
  const explained = await floe("explain", "rule", "r1");
  expect(explained.startsWith(HEAD())).toBe(true);
  expect(explained.slice(HEAD().length)).toContain("DataSourcePlan");
  expect(await floe("drop", "rule", "r1")).toBe(HEAD() + "Rule r1 is dropped.\n");
  expect(await floe("drop", "rule", "r1")).toBe(HEAD() + "Drop rule error : rule r1 not found.\n");
  expect(await floe("show", "rules")).toBe(HEAD() + "No rule definitions are found.\n");
}, 60_000);

test("import/export of rulesets read and write files on the CLI side", async () => {
  const file = join(dir, "rs.json");
  writeFileSync(file, JSON.stringify({ streams: { s9: 'CREATE STREAM s9 () WITH (DATASOURCE="s9")' }, tables: {}, rules: { rr: '{"id":"rr","sql":"SELECT * FROM s9","actions":[{"nop":{}}]}' } }));
  expect(await floe("import", "ruleset", "-f", file)).toBe(HEAD() + "imported 1 streams, 0 tables and 1 rules\n");
  expect(await floe("export", "ruleset", join(dir, "out.json"))).toBe(HEAD() + "exported 2 streams, 0 tables and 1 rules\n");
  expect(Object.keys((await Bun.file(join(dir, "out.json")).json()).rules)).toEqual(["rr"]);
});

test("JavaScript UDFs run in rules: created by the CLI, planned by the daemon", async () => {
  expect(await floe("create", "script", '{"id":"area","script":"function area(x, y) { return x * y; }","isAgg":false}')).toBe(HEAD() + "JavaScript function area is created.\n");
  expect(await floe("validate", "rule", "ru", '{"sql":"SELECT area(temperature, 2) AS a FROM demo","actions":[{"nop":{}}]}')).toBe(HEAD() + "The rule has been successfully validated and is confirmed to be correct.\n");
  expect(await floe("drop", "script", "area")).toBe(HEAD() + "JavaScript function area is dropped\n");
});

test("schema verbs manage protobuf schemas", async () => {
  const proto = 'syntax = "proto3"; message M { int64 a = 1; }';
  expect(await floe("show", "schemas", "protobuf")).toBe(HEAD() + "No schema definitions are found.\n");
  expect(await floe("create", "schema", "protobuf", "s1", JSON.stringify({ name: "s2", content: proto }))).toBe(HEAD() + "Create schema error: name mismatch.\n");
  expect(await floe("create", "schema", "protobuf", "s1", JSON.stringify({ name: "s1", content: proto, file: "/x.proto" }))).toBe(HEAD() + "Invalid body: Cannot specify both content and file\n");
  expect(await floe("create", "schema", "protobuf", "s1", JSON.stringify({ name: "s1", content: proto }))).toBe(HEAD() + "Schema s1 is created.\n");
  expect(await floe("show", "schemas", "protobuf")).toBe(HEAD() + '[\n  "s1"\n]\n');
  expect(await floe("describe", "schema", "protobuf", "s1")).toContain('"content": "syntax = \\"proto3\\"; message M { int64 a = 1; }"');
  expect(await floe("drop", "schema", "protobuf", "s1")).toBe(HEAD() + "Schema s1 is dropped\n");
  expect(await floe("describe", "schema", "protobuf", "s1")).toBe(HEAD() + "Desc schema error : not found.\n");
  // Under the name floe an empty list is no result: stdout stays empty (`| jq` reads nothing), the sentence goes to stderr.
  expect(await floeVerb("show", "schemas", "protobuf")).toEqual({ code: 0, out: "", err: HEAD() + "No schema definitions are found.\n" });
});

test("under the name floe: results on stdout, the connection line and errors on stderr, exit 0/1/2", async () => {
  expect(await floeVerb("show", "streams")).toEqual({ code: 0, out: "demo\ns9\n\n", err: HEAD() });
  expect(await floeVerb("create", "rule", "rj", '{"sql":"SELECT * FROM demo","actions":[{"nop":{}}]}')).toMatchObject({ code: 0, err: HEAD() });
  // `floe show rules | jq`: standard output is the JSON alone.
  const shown = await floeVerb("show", "rules");
  expect((JSON.parse(shown.out) as { id: string }[]).map((r) => r.id)).toContain("rj");
  expect(await floeVerb("describe", "rule", "nope")).toEqual({ code: 1, out: "", err: HEAD() + "Desc rule error : Rule nope is not found..\n" });
  expect(await floeVerb("create", "rule", "rk", '{"sql":"SELECT * FROM demo"}')).toEqual({ code: 1, out: "", err: HEAD() + "Create rule rk error : invalid rule json: Missing rule actions..\n" });
  expect(await floeVerb("create", "rule", "r3")).toEqual({ code: 2, out: "", err: HEAD() + "Expect rule name and json.\nBut found 1 args:[r3].\n" });
  expect(await floeVerb("show")).toEqual({ code: 2, out: "", err: HEAD() + "Incorrect Usage. show needs a sub-command\n" });
  expect((await floeVerb("drop", "rule", "rj")).code).toBe(0);
});

test("invoked as `kuiper` the same failures print on stdout and exit 0", async () => {
  expect(await floe("describe", "rule", "nope")).toBe(HEAD() + "Desc rule error : Rule nope is not found..\n");
  expect(await floe("show", "streams")).toBe(HEAD() + "demo\ns9\n\n");
});

test("no server: the connection failure line (floe: on stderr, exit 1); a verb's --help needs none", async () => {
  writeFileSync(join(dir, "etc", "client.yaml"), "basic:\n  host: 127.0.0.1\n  port: 1\n");
  const line = "Connecting to 127.0.0.1:1... \nFailed to connect the server, please start the server.\n";
  expect(await floe("show", "streams")).toBe(line);
  expect(await floeVerb("show", "streams")).toEqual({ code: 1, out: "", err: line });
  const help = await floeVerb("show", "--help");
  expect(help.code).toBe(0);
  expect(help.out).toStartWith("floe show — List streams, tables, rules");
  expect(help.out).toContain("Exit status: 0 done, 1 the server refused or failed");
  writeFileSync(join(dir, "etc", "client.yaml"), `basic:\n  host: 127.0.0.1\n  port: ${d.cliPort}\n`);
});
