/** `floe serve` says where it is: etc, data and log directories and the addresses, in its log (file or stderr). */
import { expect, test } from "bun:test";
import { existsSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, tempHome } from "./daemon.ts";

test("start-up logs the directories and the listening addresses on stderr", async () => {
  const dir = tempHome();
  const d = await startFloe(dir);
  try {
    await waitFor(() => d.stderr().includes("CLI (kuiper-style) listening"), "the start-up lines");
    const err = d.stderr();
    expect(err).toContain(`level=info msg="etc directory: ${join(dir, "etc")}"`);
    expect(err).toContain(`level=info msg="data directory: ${join(dir, "data")}"`);
    expect(err).toContain(`level=info msg="REST API listening on http://127.0.0.1:${d.restPort}"`);
    expect(await d.stop()).toBe(0);
  } finally {
    await d.stop();
  }
}, 30_000);

test("basic.fileLog writes log/stream.log (a link to the timestamped file), not stderr; --log-level and --log-format apply", async () => {
  const dir = tempHome();
  const d = await startFloe(dir, { KUIPER__BASIC__FILELOG: "true" }, ["--log", join(dir, "log"), "--log-level", "warn", "--log-format", "json"]);
  try {
    await d.call("POST", "/streams", { sql: 'CREATE STREAM m () WITH (DATASOURCE="m", TYPE="memory")' });
  } finally {
    expect(await d.stop()).toBe(0);
  }
  const link = join(dir, "log", "stream.log");
  expect(existsSync(link)).toBe(true);
  expect(readlinkSync(link)).toMatch(/^stream\.log\.\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d$/);
  // warn: the info start-up lines are below the level.
  expect(readFileSync(link, "utf8")).not.toContain("etc directory");
  expect(d.stderr()).not.toContain("level=");
}, 30_000);

test("at info the file holds the start-up lines as JSON", async () => {
  const dir = tempHome();
  const d = await startFloe(dir, { KUIPER__BASIC__FILELOG: "true" }, ["-log", join(dir, "log"), "-log-format=json"]);
  expect(await d.stop()).toBe(0);
  const first = readFileSync(join(dir, "log", "stream.log"), "utf8").split("\n")[0]!;
  expect(JSON.parse(first)).toMatchObject({ level: "info", msg: `etc directory: ${join(dir, "etc")}` });
}, 30_000);
