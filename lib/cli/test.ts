/** `floe test [DIR|CASE.json]...`: runs golden cases (fixtures/README.md), one line per case, then `N passed, N failed`. */
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { findUp } from "../config/paths.ts";
import { caseFiles, loadCases, runCaseFull } from "./golden.ts";
import { rewriteWants } from "./case-update.ts";
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
      "Run golden cases: a rule as deployed, replay input and the expected emissions (and status metrics)\n\n" +
      "Examples:\n" +
      "  floe test                                                # every case file under the current directory\n" +
      "  floe test rules/                                         # cases beside the rules they test\n" +
      "  floe test fixtures/golden ../shared/conformance          # the eKuiper conformance vectors too\n" +
      "  floe test --reporter junit > junit.xml                   # for CI\n" +
      "  floe test --update rules/hot.case.json                   # write `want` from what the rule emits\n\n" +
      "A case names the rule file as it is deployed (\"rule\": \"hot.sql\", or an eKuiper rule .json with\n" +
      "\"streams\": \"streams.sql\"), and its streams are fed from the case's \"input\" whatever their TYPE:\n" +
      "an MQTT stream is tested with no broker (eKuiper's mockSource). Lookup tables are still queried.\n" +
      "A case file holds one case or an array of them; fixtures/README.md documents the format, and a key\n" +
      "it does not have is an error. A directory is searched for *.json case files (rule .json files and\n" +
      "other JSON beside them are passed over; node_modules and hidden directories are not searched).\n" +
      "A failure shows the emission, row and field that differ, with what was expected and what came.\n" +
      "--update rewrites only the `want` of failing cases, keeping the rest of the file as it was.\n" +
      "A case with \"divergence\": \"why\" (or listed by its source in --divergences, default\n" +
      "fixtures/conformance-divergences.json) must fail: it reports as a known divergence, and as a\n" +
      "failure once it passes. Exit 1 if any case fails.",
  },
  args: {
    paths: { type: "positional", required: false, description: "case files or directories (default: the current directory)" },
    quiet: { type: "boolean", description: "print only failures and the summary" },
    update: { type: "boolean", description: "rewrite each failing case's `want` from the emissions it produced" },
    reporter: { type: "enum", options: ["text", "tap", "junit"], default: "text", description: "output format on stdout" },
    divergences: { type: "string", description: "JSON file of known divergences {\"cases\": {source: reason}}", valueHint: "FILE" },
  },
  async run({ args }) {
    const paths = (args._.length ? args._ : ["."]).map((p) => resolveCasePath(String(p)));
    for (const p of paths) if (!existsSync(p)) throw new UsageError(`no such case file or directory: ${p}`);
    const reporter = args.reporter as Reporter;
    const known = await loadDivergences(args.divergences);
    const results: CaseResult[] = [];
    const { files, unparsed } = await caseFiles(paths);
    if (files.length === 0) throw new UsageError(`no case files under ${args._.length ? args._.join(" ") : "the current directory"} (fixtures/README.md shows one)`);
    const say = (text: string) => void (reporter === "text" && process.stdout.write(text));
    for (const abs of files) {
      // Names relative to the working directory: the same in every checkout and every CI report.
      const file = shown(abs);
      let loaded: Awaited<ReturnType<typeof loadCases>>;
      try {
        loaded = await loadCases(abs);
      } catch (e) {
        const r: CaseResult = { file, label: file, outcome: "fail", diff: `not a case file: ${(e as Error).message}`, ms: 0 };
        results.push(r);
        say(textLine(r, !!args.quiet));
        continue;
      }
      const updates: { index: number; want: unknown[][] }[] = [];
      for (const [index, c] of loaded.cases.entries()) {
        const t0 = performance.now();
        const { diff, got } = await runCaseFull(c, dirname(abs)).catch((e: unknown) => ({ diff: `crashed: ${(e as Error).stack ?? e}`, got: undefined }));
        const divergence = c.divergence ?? (c.source !== undefined ? known[c.source] : undefined);
        const label = `${c.source ?? file} ${c.name}`;
        const ms = performance.now() - t0;
        let r: CaseResult;
        if (args.update && diff !== undefined && got !== undefined && c.err === undefined && !divergence) {
          updates.push({ index, want: got });
          r = { file, label, outcome: "pass", ms };
        } else if (divergence !== undefined)
          r = diff === undefined ? { file, label, outcome: "fail", diff: `known divergence now passes: remove it (${divergence})`, ms } : { file, label, outcome: "known", divergence, ms };
        else r = diff === undefined ? { file, label, outcome: "pass", ms } : { file, label, outcome: "fail", diff, ms };
        results.push(r);
        say(textLine(r, !!args.quiet));
      }
      if (updates.length) {
        await Bun.write(abs, rewriteWants(loaded.text, updates));
        say(`updated ${file}\n`);
      }
    }
    if (unparsed.length) process.stderr.write(`floe test: passed over ${unparsed.length} .json file(s) that are not JSON: ${unparsed.map(shown).join(", ")}\n`);
    if (reporter === "tap") process.stdout.write(tap(results));
    else if (reporter === "junit") process.stdout.write(junit(results));
    else process.stdout.write(summary(results) + "\n");
    return results.some((r) => r.outcome === "fail") ? 1 : 0;
  },
});

/** A path as reports show it: relative to the working directory when under it. */
function shown(abs: string): string {
  const rel = relative(process.cwd(), abs);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : abs;
}
