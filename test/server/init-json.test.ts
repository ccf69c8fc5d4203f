/** `init.json` (config-and-cli.md §6.3): imported at start, once per modification time. */
import { expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { startFloe, tempHome } from "./daemon.ts";

const INIT = JSON.stringify({
  streams: { boot: 'CREATE STREAM boot () WITH (DATASOURCE="boot", TYPE="memory")' },
  tables: {},
  rules: { bootrule: '{"id":"bootrule","sql":"SELECT * FROM boot","actions":[{"nop":{}}]}' },
});

test("etc/init.json is imported once; a deleted item stays deleted after a restart", async () => {
  const dir = tempHome({ "init.json": INIT });
  let d = await startFloe(dir);
  try {
    expect(JSON.parse((await d.call("GET", "/streams")).text)).toEqual(["boot"]);
    const rules = JSON.parse((await d.call("GET", "/rules")).text) as { id: string; status: string }[];
    expect(rules.map((r) => [r.id, r.status])).toEqual([["bootrule", "running"]]);
    expect(readdirSync(join(dir, "etc")).filter((f) => f.startsWith("initialized"))).toHaveLength(1);
    expect((await d.call("DELETE", "/rules/bootrule")).status).toBe(200);
    expect(await d.stop()).toBe(0);
    d = await startFloe(dir);
    expect(JSON.parse((await d.call("GET", "/rules")).text)).toEqual([]);
    expect(await d.stop()).toBe(0);
  } finally {
    await d.stop();
  }
}, 20_000);
