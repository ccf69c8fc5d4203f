/**
 * Every vector of ../shared/conformance through the pipe-mode path of `floe run --replay`. The
 * few known divergences (fixtures/conformance-divergences.json, each with its reason) must fail
 * and everything else must pass. Prints the pass count per file.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import divergences from "../../fixtures/conformance-divergences.json";
import { sharedDir } from "../helpers/shared.ts";
import { runVector, type Vector } from "./runner.ts";

const DIR = join(sharedDir(), "conformance");

const known = divergences.cases as Record<string, string>;
const counts: string[] = [];

for (const file of readdirSync(DIR).filter((f) => f.endsWith(".json")).sort()) {
  const cases = JSON.parse(readFileSync(join(DIR, file), "utf8")) as Vector[];
  let passed = 0;
  describe(file, () => {
    test.each(cases.map((c, i) => [`${i} ${c.source} ${c.name}`.slice(0, 160), c] as const))("%s", async (_label, c) => {
      const diff = await runVector(c);
      if (diff === undefined) passed++;
      if (c.source !== undefined && c.source in known) expect(diff, `known divergence now passes: remove it from the list`).toBeDefined();
      else expect(diff).toBeUndefined();
    });
  });
  afterAll(() => void counts.push(`${file}: ${passed}/${cases.length}`));
}

afterAll(() => {
  process.stderr.write(`\nconformance vectors passed per file:\n  ${counts.join("\n  ")}\n`);
});
