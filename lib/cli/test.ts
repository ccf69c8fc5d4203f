/** `floe test [DIR|CASE.json]...`: runs golden cases (fixtures/README.md), one line per case, then `N passed, N failed`. */
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { findUp } from "../config/paths.ts";
import { caseFiles, loadCases, runCaseFull, type GoldenCase } from "./golden.ts";
import { UsageError } from "./options.ts";
import { junit, summary, tap, textLine, type CaseResult, type Reporter } from "./test-report.ts";

/**
 * A path as given, or — when it does not exist and names the shared contract (`../shared/conformance`) —
 * the same path under FLOE_SHARED_DIR or the `shared` directory next to the repository
 * (test/helpers/shared.ts resolves it the same way), so the README's command works from any clone.
 */
export function resolveCasePath(p: string, env: Record<string, string | undefined> = process.env, cwd = process.cwd()): string {
  const abs = resolve(cwd, p);
  if (existsSync(abs)) return abs;
  const m = /(?:^|\/)shared\/(.*)$/.exec(p);
  if (!m) return abs;
  const repo = findUp(cwd, "package.json");
  const roots = [env.FLOE_SHARED_DIR, repo ? join(dirname(repo), "..", "shared") : undefined].filter((x): x is string => !!x);
  for (const r of roots) if (existsSync(join(r, m[1]!))) return resolve(join(r, m[1]!));
  return abs;
}

/** Known divergences by case `source` (fixtures/conformance-divergences.json: `{"cases": {source: why}}`). */
async function loadDivergences(path: string | undefined): Promise<Record<string, string>> {
  const file = path ?? (existsSync("fixtures/conformance-divergences.json") ? "fixtures/conformance-divergences.json" : undefined);
  if (!file) return {};
  let v: { cases?: unknown };
  try {
    v = JSON.parse(await Bun.file(file).text()) as typeof v;
  } catch (e) {
    throw new UsageError(`cannot read divergences ${file}: ${(e as Error).message}`);
  }
  return v.cases && typeof v.cases === "object" ? (v.cases as Record<string, string>) : {};
}

export default defineCommand({
  meta: {
    name: "test",
    description:
      "Run golden cases: a rule, replay input and the expected emissions (and status metrics)\n\n" +
      "Examples:\n" +
      "  floe test fixtures/golden\n" +
      "  floe test fixtures/golden ../shared/conformance         # the eKuiper conformance vectors too\n" +
      "  floe test --reporter junit fixtures/golden > junit.xml  # for CI\n" +
      "  floe test --update fixtures/golden/new-case.json        # write `want` from what the rule emits\n\n" +
      "A case file holds one case or an array of them; fixtures/README.md documents the format. A key\n" +
      "the format does not have is an error. A case with \"divergence\": \"why\" (or listed by its source in\n" +
      "--divergences, default fixtures/conformance-divergences.json) must fail: it reports as a known\n" +
      "divergence, and as a failure once it passes. Exit 1 if any case fails.",
  },
  args: {
    paths: { type: "positional", required: false, description: "case files or directories (default: fixtures/golden)" },
    quiet: { type: "boolean", description: "print only failures and the summary" },
    update: { type: "boolean", description: "rewrite each failing case's `want` from the emissions it produced" },
    reporter: { type: "enum", options: ["text", "tap", "junit"], default: "text", description: "output format on stdout" },
    divergences: { type: "string", description: "JSON file of known divergences {\"cases\": {source: reason}}", valueHint: "FILE" },
  },
  async run({ args }) {
    const paths = (args._.length ? args._ : ["fixtures/golden"]).map((p) => resolveCasePath(String(p)));
    for (const p of paths) if (!existsSync(p)) throw new UsageError(`no such case file or directory: ${p}`);
    const reporter = args.reporter as Reporter;
    const known = await loadDivergences(args.divergences);
    const results: CaseResult[] = [];
    for (const file of await caseFiles(paths)) {
      let loaded: Awaited<ReturnType<typeof loadCases>>;
      try {
        loaded = await loadCases(file);
      } catch (e) {
        const r: CaseResult = { file, label: file, outcome: "fail", diff: `not a case file: ${(e as Error).message}`, ms: 0 };
        results.push(r);
        if (reporter === "text") process.stdout.write(textLine(r, !!args.quiet));
        continue;
      }
      let changed = false;
      for (const c of loaded.cases) {
        const t0 = performance.now();
        const { diff, got } = await runCaseFull(c, dirname(file)).catch((e: unknown) => ({ diff: `crashed: ${(e as Error).stack ?? e}`, got: undefined }));
        const divergence = c.divergence ?? (c.source !== undefined ? known[c.source] : undefined);
        const label = `${c.source ?? file} ${c.name}`;
        let r: CaseResult;
        if (args.update && diff !== undefined && got !== undefined && c.err === undefined && !divergence) {
          (c as GoldenCase).want = got;
          changed = true;
          r = { file, label, outcome: "pass", ms: performance.now() - t0 };
        } else if (divergence !== undefined)
          r = diff === undefined ? { file, label, outcome: "fail", diff: `known divergence now passes: remove it (${divergence})`, ms: performance.now() - t0 } : { file, label, outcome: "known", divergence, ms: performance.now() - t0 };
        else r = diff === undefined ? { file, label, outcome: "pass", ms: performance.now() - t0 } : { file, label, outcome: "fail", diff, ms: performance.now() - t0 };
        results.push(r);
        if (reporter === "text") process.stdout.write(textLine(r, !!args.quiet));
      }
      if (changed) {
        await Bun.write(file, JSON.stringify(loaded.single ? loaded.cases[0] : loaded.cases, null, 2) + "\n");
        if (reporter === "text") process.stdout.write(`updated ${file}\n`);
      }
    }
    if (reporter === "tap") process.stdout.write(tap(results));
    else if (reporter === "junit") process.stdout.write(junit(results));
    else process.stdout.write(summary(results) + "\n");
    return results.some((r) => r.outcome === "fail") ? 1 : 0;
  },
});
