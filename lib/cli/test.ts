/** `floe test [DIR|CASE.json]...`: runs golden cases, one line per case, then `N passed, N failed`. */
import { defineCommand } from "citty";
import { dirname } from "node:path";
import { caseFiles, loadCases, runCase } from "./golden.ts";

export default defineCommand({
  meta: {
    name: "test",
    description:
      "Run golden cases: a rule, replay input and the expected emissions (and status metrics).\n\n" +
      "  floe test fixtures/golden\n  floe test ../shared/conformance/valuer.json\n\n" +
      "A case file holds one case or an array of them (the conformance vector format). Exit 1 if any fails.",
  },
  args: {
    paths: { type: "positional", required: false, description: "case files or directories (default: fixtures/golden)" },
    quiet: { type: "boolean", description: "print only failures and the summary" },
  },
  async run({ args }) {
    const paths = args._.length ? args._ : ["fixtures/golden"];
    let passed = 0;
    let failed = 0;
    for (const file of await caseFiles(paths)) {
      const { cases } = await loadCases(file);
      for (const c of cases) {
        const diff = await runCase(c, dirname(file)).catch((e: unknown) => `crashed: ${(e as Error).stack ?? e}`);
        const label = `${c.source ?? file} ${c.name}`;
        if (diff === undefined) {
          passed++;
          if (!args.quiet) process.stdout.write(`ok   ${label}\n`);
        } else {
          failed++;
          process.stdout.write(`FAIL ${label}\n  ${diff.replace(/\n/g, "\n  ")}\n`);
        }
      }
    }
    process.stdout.write(`${passed} passed, ${failed} failed\n`);
    return failed ? 1 : 0;
  },
});
