/** The compiled executable (make build) starts, answers --version, and runs the demo rule. */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { freePort } from "../helpers/data-server.ts";
import { waitFor } from "../helpers/wait.ts";
import { startFloe, tempHome } from "../server/daemon.ts";

const ROOT = join(import.meta.dir, "../..");
const BIN = join(ROOT, "dist/floe");

test("dist/floe exists (run `make build` first; `make test` does)", () => {
  expect(existsSync(BIN)).toBe(true);
});

test("dist/floe --version", () => {
  const p = Bun.spawnSync([BIN, "--version"]);
  expect(p.exitCode).toBe(0);
  expect(p.stdout.toString()).toMatch(/^floe \d+\.\d+\.\d+\n$/);
});

test("dist/floe run prints the demo results", () => {
  const p = Bun.spawnSync([BIN, "run", "rules/demo.sql", "--input", "fixtures/demo.jsonl"], { cwd: ROOT });
  expect(p.exitCode).toBe(0);
  expect(p.stdout.toString().trim().split("\n")).toHaveLength(3);
});

test("dist/floe runs a JavaScript UDF in its sandbox (the WebAssembly module is in the executable)", async () => {
  const dir = tempHome();
  const port = freePort();
  const d = await startFloe(dir, { KUIPER__SOURCE__HTTPSERVERPORT: String(port) }, [], [BIN]);
  try {
    expect((await d.call("POST", "/udf/javascript", { id: "mul", script: "function mul(a, b) { return a * b + 1; }" })).status).toBe(201);
    const spin = await d.call("POST", "/udf/javascript", { id: "spin", script: "for (;;) {} function spin() {}" });
    expect(JSON.parse(spin.text).message).toBe("javascript function create command error: time limit of 100ms exceeded");
    expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM inbox () WITH (TYPE="httppush", DATASOURCE="/inbox", FORMAT="json")' })).status).toBe(201);
    const out = join(dir, "out.jsonl");
    expect((await d.call("POST", "/rules", { id: "r", sql: "SELECT mul(v, 2) AS i, mul(v, 0.5) AS f FROM inbox", actions: [{ file: { path: out, fileType: "lines", sendSingle: true } }] })).status).toBe(201);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/inbox`, { method: "POST", body: '{"v":3}' }).catch(() => undefined))?.status === 200, "the httppush endpoint", 10_000, 10);
    await waitFor(async () => JSON.parse((await d.call("GET", "/rules/r/status")).text).sink_file_0_0_records_out_total === 1, "the result in the file sink", 10_000, 10);
    await d.call("POST", "/rules/r/stop");
    expect(readFileSync(out, "utf8")).toBe('{"f":2.5,"i":7}');
  } finally {
    await d.stop("SIGKILL");
  }
}, 20_000);
