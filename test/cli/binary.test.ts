/** The compiled executable (make build) starts, answers --version, and runs the demo rule. */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";

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
