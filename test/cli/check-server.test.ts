/** `floe check --server URL` plans rule files against a running daemon's streams and tables. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFloe, tempHome, type DaemonProc } from "../server/daemon.ts";

const ROOT = join(import.meta.dir, "../..");
const tmp = mkdtempSync(join(tmpdir(), "floe-check-server-"));
let d: DaemonProc;

beforeAll(async () => {
  d = await startFloe(tempHome());
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM demo (temperature float, device string) WITH (DATASOURCE="demo", FORMAT="json")' })).status).toBe(201);
  expect((await d.call("POST", "/tables", { sql: 'CREATE TABLE devices (device string, room string) WITH (DATASOURCE="devices.json", TYPE="file")' })).status).toBe(201);
});

afterAll(async () => {
  await d?.stop();
});

function check(args: string[]): { code: number; out: string; err: string } {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), "check", ...args], { cwd: tmp });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

test("a column the server's stream does not have fails the check, with the name it is close to", () => {
  const bad = join(tmp, "bad.json");
  writeFileSync(bad, JSON.stringify({ id: "r", sql: "SELECT devce FROM demo", actions: [{ log: {} }] }));
  const r = check(["--server", d.base, bad]);
  expect(r.code).toBe(1);
  expect(r.out).toStartWith(`${bad} (sql): unknown field devce\n`);
  expect(r.out).toContain("did you mean device? (a column)");
  // Without --server the stream is schemaless and the same rule passes.
  expect(check([bad]).code).toBe(0);
});

test("a rule joining the server's stream and table passes", () => {
  const good = join(tmp, "good.sql");
  writeFileSync(good, "SELECT demo.temperature, devices.room FROM demo INNER JOIN devices ON demo.device = devices.device");
  expect(check(["--server", d.base, good])).toEqual({ code: 0, out: `${good}: ok\n`, err: "" });
});

test("an unreachable server is a failure that says so", () => {
  const good = join(tmp, "good.sql");
  const r = check(["--server", "http://127.0.0.1:1", good]);
  expect(r.code).toBe(1);
  expect(r.err).toStartWith("floe: cannot reach the server at http://127.0.0.1:1: ");
  expect(check(["--server", "localhost:9081", good])).toMatchObject({ code: 2, err: 'floe: --server takes the REST API\'s URL, such as http://127.0.0.1:9081 (got "localhost:9081")\n' });
});
