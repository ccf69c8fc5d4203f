/**
 * Protobuf outside the daemon's own tests: pipe mode reads `<etc>/schemas/protobuf` for `raw`
 * replay payloads, and the compiled executable (make build) carries protobufjs, int64 included.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import protobuf from "protobufjs";
import { freePort } from "../helpers/data-server.ts";
import { waitFor } from "../helpers/wait.ts";
import { startFloe, tempHome } from "../server/daemon.ts";

const ROOT = join(import.meta.dir, "../..");
const BIN = join(ROOT, "dist/floe");
const BOOK = 'syntax = "proto3";\nmessage Book { int64 id = 1; string title = 2; repeated string tags = 3; }\n';
const Book = protobuf.parse(BOOK, { keepCase: true }).root.lookupType("Book");
const payload = Buffer.from(Book.encode({ id: "9007199254740993", title: "Dune", tags: ["sf"] }).finish());

test("pipe mode decodes replayed protobuf payloads with the etc schemas; a bad one is a decode error", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-pb-"));
  mkdirSync(join(dir, "etc", "schemas", "protobuf"), { recursive: true });
  writeFileSync(join(dir, "etc", "schemas", "protobuf", "book.proto"), BOOK);
  writeFileSync(join(dir, "rule.sql"), 'CREATE STREAM books () WITH (FORMAT="protobuf", SCHEMAID="book.Book");\nSELECT id + 1 AS next, title, tags FROM books;\n');
  const input = `{"ts":1,"raw":"${payload.toString("base64")}"}\n{"ts":2,"raw":"/w=="}\n`;
  const p = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), "run", join(dir, "rule.sql"), "--replay", "--etc", join(dir, "etc")], { stdin: Buffer.from(input) });
  expect(p.stdout.toString()).toBe('{"next":9007199254740994,"tags":["sf"],"title":"Dune"}\n');
  expect(p.stderr.toString()).toContain("line 2: fail to decode protobuf message Book: ");
});

test("dist/floe decodes a protobuf httppush payload with a registered schema (run `make build` first)", async () => {
  expect(existsSync(BIN)).toBe(true);
  const dir = tempHome();
  const port = freePort();
  const d = await startFloe(dir, { KUIPER__SOURCE__HTTPSERVERPORT: String(port) }, [], [BIN]);
  try {
    expect((await d.call("POST", "/schemas/protobuf", { name: "book", content: BOOK })).status).toBe(201);
    expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM inbox () WITH (TYPE="httppush", DATASOURCE="/inbox", FORMAT="protobuf", SCHEMAID="book.Book")' })).status).toBe(201);
    const out = join(dir, "out.jsonl");
    expect((await d.call("POST", "/rules", { id: "r", sql: "SELECT id, title, tags FROM inbox", actions: [{ file: { path: out, fileType: "lines", sendSingle: true } }] })).status).toBe(201);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/inbox`, { method: "POST", body: payload }).catch(() => undefined))?.status === 200, "the httppush endpoint", 10_000, 10);
    await waitFor(async () => JSON.parse((await d.call("GET", "/rules/r/status")).text).sink_file_0_0_records_out_total === 1, "the result in the file sink", 10_000, 10);
    await d.call("POST", "/rules/r/stop");
    expect(readFileSync(out, "utf8")).toBe('{"id":9007199254740993,"tags":["sf"],"title":"Dune"}');
  } finally {
    await d.stop("SIGKILL");
  }
}, 30_000);
