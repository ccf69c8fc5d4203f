/** The README and docs/: the first screen's order, the README's length, links that resolve, reasons instead of issue numbers. */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const README = join(ROOT, "README.md");
const PAGES = [README, ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => join(ROOT, "docs", f))];

describe("the README", () => {
  const text = readFileSync(README, "utf8");

  test("stays a page for users: at most 400 lines", () => {
    expect(text.split("\n").length).toBeLessThanOrEqual(400);
  });

  test("its first commands install floe, run the demo, then run the tests", () => {
    const block = /```sh\n([\s\S]*?)```/.exec(text)!;
    expect(block.index, "the first code block is within the first screen").toBeLessThan(text.split("\n").slice(0, 10).join("\n").length);
    const lines = block[1]!.split("\n");
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    const install = at(/^make build && sudo make install\b/);
    const deb = at(/^make deb && sudo apt install \.\/dist\/floe_\*_amd64\.deb\b/);
    const demo = at(/^floe run rules\/demo\.sql --input fixtures\/demo\.jsonl\b/);
    const tests = at(/^make test\b/);
    for (const [name, i] of Object.entries({ install, deb, demo, tests })) expect(i, name).toBeGreaterThanOrEqual(0);
    expect(install).toBeLessThan(demo);
    expect(deb).toBeLessThan(demo);
    expect(demo).toBeLessThan(tests);
  });

  test("keeps the sections the project's brief requires", () => {
    for (const h of ["## Differences from eKuiper", "## eKuiper compatibility", "## Dependencies", "## Pipe mode", "## Install"])
      expect(text).toContain(`\n${h}\n`);
  });
});

describe("README.md and docs/*.md", () => {
  test.each(PAGES.map((p) => [p.slice(ROOT.length + 1), p]))("%s: every relative link names a file that exists", (_, page) => {
    const text = readFileSync(page, "utf8");
    const broken = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!)
      .filter((href) => !/^[a-z]+:/.test(href) && !href.startsWith("#"))
      .filter((href) => !existsSync(join(dirname(page), href.split("#")[0]!)));
    expect(broken).toEqual([]);
  });

  test.each(PAGES.map((p) => [p.slice(ROOT.length + 1), p]))("%s: says why rather than citing an issue number", (_, page) => {
    expect(readFileSync(page, "utf8")).not.toMatch(/\bissues? \d+\b/i);
  });
});
