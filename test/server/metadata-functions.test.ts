/** `/metadata/functions` (rest-api.md §13): eKuiper's metadata shape with hints, arguments and help links. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFloe, type DaemonProc } from "./daemon.ts";

let d: DaemonProc;
beforeAll(async () => {
  d = await startFloe();
  await d.call("POST", "/udf/javascript", { id: "twice", script: "function twice(x) { return 2 * x; }" });
}, 30_000);
afterAll(async () => {
  await d?.stop();
});

interface Fn {
  name: string;
  example: string;
  hint: { en_US: string; zh_CN: string };
  args: { name: string; optional: boolean; hidden: boolean; control: string }[];
  outputs: unknown[];
}
interface Group {
  name: string;
  about: { helpUrl: { en: string; zh: string } };
  functions: Fn[];
}

test("functions are grouped as eKuiper documents them, each with its hint and arguments", async () => {
  const r = await d.call("GET", "/metadata/functions");
  expect(r.status).toBe(200);
  const groups = JSON.parse(r.text) as Group[];
  const byName = new Map(groups.flatMap((g) => g.functions.map((f) => [f.name, { g: g.name, f }] as const)));
  expect(byName.get("lag")!.g).toBe("analytic");
  expect(byName.get("lag")!.f.example).toBe("lag(expr, offset, default, ignoreNull)");
  expect(byName.get("lag")!.f.args.map((a) => [a.name, a.optional])).toEqual([
    ["expr", false],
    ["offset", true],
    ["default", true],
    ["ignoreNull", true],
  ]);
  expect(byName.get("abs")!.f.hint.en_US).toBe("Absolute value");
  expect(byName.get("twice")!.g).toBe("javascript functions");
  // Internal incremental aggregates are not offered.
  expect(byName.has("inc_sum")).toBe(false);
  for (const [, { f }] of byName) if (f.name !== "twice") expect(f.hint.en_US).not.toBe("");
});

test("every help link is a valid URL", async () => {
  const groups = JSON.parse((await d.call("GET", "/metadata/functions")).text) as Group[];
  for (const g of groups)
    for (const u of [g.about.helpUrl.en, g.about.helpUrl.zh]) {
      expect(URL.canParse(u)).toBe(true);
      expect(u).not.toMatch(/\s/);
    }
  expect(groups.find((g) => g.name === "math")!.about.helpUrl.en).toBe("https://ekuiper.org/docs/en/latest/sqls/functions/mathematical_functions.html");
});
