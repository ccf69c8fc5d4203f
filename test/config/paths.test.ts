/** Installation roots: flags, the working directory and its parents — never the host's /etc. */
import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolvePaths } from "../../lib/config/paths.ts";

test("with no etc directory up to the root, the built-in defaults are used (not /etc)", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-paths-"));
  const p = resolvePaths({}, {}, dir);
  expect(p.etc).toBeUndefined();
  expect(p.data).toBe(join(dir, "data"));
  expect(p.log).toBe(join(dir, "log"));
});

test("an etc directory in a parent of the working directory is found", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-paths-"));
  mkdirSync(join(dir, "etc"));
  mkdirSync(join(dir, "a", "b"), { recursive: true });
  expect(resolvePaths({}, {}, join(dir, "a", "b")).etc).toBe(join(dir, "etc"));
  expect(resolvePaths({}, { KuiperBaseKey: dir }, "/").etc).toBe(join(dir, "etc"));
});

test("flags win", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-paths-"));
  mkdirSync(join(dir, "conf"));
  const p = resolvePaths({ etc: "conf", data: "d", log: "l" }, {}, dir);
  expect(p).toEqual({ etc: join(dir, "conf"), data: join(dir, "d"), log: join(dir, "l") });
});
