/**
 * Golden cases for `floe test` (pipe-mode.md §floe test). The case format is that of the
 * conformance vectors (../shared/conformance/README.md), plus `rule`/`inputFile` paths and an
 * optional `status` subset, so `floe test` runs both floe's fixtures and the vectors.
 */
import { extname, resolve } from "node:path";
import { loadLocation, UTC } from "../value/time.ts";
import { runPipe } from "../pipe/direct.ts";
import { createFunctionRegistry } from "../functions/index.ts";
import { parseStatement, splitStatements } from "../sql/parse.ts";
import type { CreateStatement, FieldType, StreamField } from "../sql/ast.ts";
import { didYouMean } from "../plan/suggest.ts";
import { emissionDiff } from "./case-diff.ts";

export interface GoldenCase {
  name: string;
  source?: string;
  /**
   * Rule file text, or `rule`: a path (relative to the case file) to the rule as deployed — a .sql
   * rule file or an eKuiper rule .json — whose streams, whatever their TYPE, are fed from `input`.
   */
  sql?: string;
  rule?: string;
  /** For a rule .json: a .sql file of the CREATE statements its streams are deployed with. */
  streams?: string;
  options?: Record<string, unknown>;
  timezone?: string;
  /** Replay envelopes inline, or `inputFile`: a path to an NDJSON file of envelopes. */
  input?: unknown[];
  inputFile?: string;
  onEof?: "flush" | "drop";
  want?: unknown[][];
  err?: string;
  parses?: boolean;
  stream?: unknown;
  match?: "unordered-rows" | "unordered-arrays";
  /** Expected values of some status metrics. */
  status?: Record<string, number | string>;
  note?: string;
  /** A known difference from eKuiper, and why: the case is expected to fail (and flagged when it passes). */
  divergence?: string;
}

/** The keys a case may have (fixtures/README.md); any other key is a mistake, such as `inputs` or `expected`. */
export const CASE_KEYS = ["name", "source", "sql", "rule", "streams", "options", "timezone", "input", "inputFile", "onEof", "want", "err", "parses", "stream", "match", "status", "note", "divergence"] as const;

/** What is wrong with the shape of a case, or undefined. */
export function caseShapeError(c: unknown): string | undefined {
  if (c === null || typeof c !== "object" || Array.isArray(c)) return "a case must be a JSON object";
  for (const k of Object.keys(c)) if (!(CASE_KEYS as readonly string[]).includes(k)) return `unknown key ${JSON.stringify(k)}${didYouMean(k, CASE_KEYS)} (fixtures/README.md lists the keys)`;
  const o = c as Record<string, unknown>;
  if (typeof o.name !== "string") return 'the case has no "name" string';
  if (o.want !== undefined && o.err !== undefined) return 'a case has "want" or "err", not both';
  return undefined;
}

/** Loads the cases of a file: one case object or an array of them, and the file's text (for `--update`). */
export async function loadCases(path: string): Promise<{ file: string; cases: GoldenCase[]; text: string }> {
  const text = await Bun.file(path).text();
  const v = JSON.parse(text) as GoldenCase | GoldenCase[];
  return { file: path, cases: Array.isArray(v) ? v : [v], text };
}

/**
 * Whether a JSON value found by a directory scan is a case file (cases may sit beside the rules):
 * an object, or an array of objects, naming a rule (`sql` or `rule`) and with none of a rule
 * .json's own keys (`actions`, `graph`, `id`).
 */
export function looksLikeCases(v: unknown): boolean {
  const items = Array.isArray(v) ? v : [v];
  return (
    items.length > 0 &&
    items.every((c) => c !== null && typeof c === "object" && !Array.isArray(c) && ("sql" in c || "rule" in c) && !("actions" in c) && !("graph" in c) && !("id" in c))
  );
}

/** The rule a case runs: its SQL and the options the rule file carries (a rule .json's). */
async function caseRule(c: GoldenCase, baseDir: string): Promise<{ sql: string; options: Record<string, unknown> } | string> {
  if (c.sql !== undefined) return { sql: c.sql, options: {} };
  if (c.rule === undefined) return "the case names no rule (sql or rule)";
  const path = resolve(baseDir, c.rule);
  const text = await Bun.file(path)
    .text()
    .catch(() => undefined);
  if (text === undefined) return `cannot read the rule ${c.rule}`;
  if (extname(path).toLowerCase() !== ".json") return { sql: text, options: {} };
  let r: { sql?: unknown; options?: unknown; graph?: unknown };
  try {
    r = JSON.parse(text) as typeof r;
  } catch (e) {
    return `${c.rule}: not valid JSON: ${(e as Error).message}`;
  }
  if (typeof r.sql !== "string") return r.graph !== undefined ? `${c.rule}: floe test runs SQL rules; a graph rule is not supported (run it with floe run)` : `${c.rule}: the rule has no "sql" string`;
  const options = r.options && typeof r.options === "object" && !Array.isArray(r.options) ? (r.options as Record<string, unknown>) : {};
  return { sql: r.sql, options };
}

async function* batch(lines: string[]): AsyncIterable<string[]> {
  yield lines;
}

/** Runs a case; returns undefined when it passes, else what differed. */
export async function runCase(c: GoldenCase, baseDir = "."): Promise<string | undefined> {
  return (await runCaseFull(c, baseDir)).diff;
}

/** Runs a case: what differed (undefined: it passes) and the emissions it produced (for `--update`). */
export async function runCaseFull(c: GoldenCase, baseDir = "."): Promise<{ diff: string | undefined; got?: unknown[][] }> {
  const shape = caseShapeError(c);
  if (shape) return { diff: shape };
  if (c.parses) return { diff: checkParse(c) };
  const rule = await caseRule(c, baseDir);
  if (typeof rule === "string") return { diff: rule };
  let streamsSql: string | undefined;
  if (c.streams !== undefined) {
    streamsSql = await Bun.file(resolve(baseDir, c.streams))
      .text()
      .catch(() => undefined);
    if (streamsSql === undefined) return { diff: `cannot read the streams ${c.streams}` };
  }
  const lines = c.inputFile
    ? (await Bun.file(resolve(baseDir, c.inputFile)).text()).split("\n")
    : (c.input ?? []).map((x) => JSON.stringify(x));
  let out = "";
  let err = "";
  const res = await runPipe({
    sql: rule.sql,
    streamsSql,
    options: { ...rule.options, ...c.options },
    mockSources: true,
    input: batch(lines),
    replay: true,
    emit: "array",
    onEof: c.onEof ?? "flush",
    zone: c.timezone ? loadLocation(c.timezone) : UTC,
    write: (t) => void (out += t),
    warn: (t) => void (err += t),
  });
  if (c.err !== undefined) {
    if (res.exitCode !== 1) return { diff: `expected the rule to fail with "${c.err}", it exited ${res.exitCode}` };
    if (!err.includes(c.err.trimEnd())) return { diff: `stderr ${JSON.stringify(err.trim())} lacks ${JSON.stringify(c.err.trimEnd())}` };
    return { diff: undefined };
  }
  if (res.exitCode !== 0) return { diff: `exit ${res.exitCode}: ${err.trim()}` };
  const got = out.split("\n").filter((l) => l).map((l) => JSON.parse(l) as unknown[]);
  const want = c.want ?? [];
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    if (i >= want.length || i >= got.length || !emissionEqual(got[i]!, want[i]!, c.match))
      return { got, diff: emissionDiff(i, want[i], got[i], (a, b) => deepEqual(a, b, c.match), c.match === "unordered-rows") };
  }
  for (const [k, v] of Object.entries(c.status ?? {})) {
    const g = res.status?.[k];
    if (g !== v) return { got, diff: `status ${k}: want ${JSON.stringify(v)}, got ${JSON.stringify(g)}` };
  }
  return { got, diff: undefined };
}

function checkParse(c: GoldenCase): string | undefined {
  try {
    const parts = /several statements/.test(c.note ?? "") ? splitStatements(c.sql!) : [{ text: c.sql! }];
    for (const p of parts) {
      const s = parseStatement(p.text, createFunctionRegistry());
      if (c.stream !== undefined && s.kind === "create") {
        const got = neutralStream(s);
        if (!deepEqual(got, c.stream, undefined)) return `stream:\n  want ${JSON.stringify(c.stream)}\n  got  ${JSON.stringify(got)}`;
      }
    }
    return undefined;
  } catch (e) {
    return `parse failed: ${(e as Error).message}`;
  }
}

/** The neutral form of a CREATE's parse result used by parser-create-stream.json. */
function neutralStream(s: CreateStatement): unknown {
  const type = (t: FieldType): unknown =>
    typeof t === "string" ? t : "array" in t ? { array: type(t.array) } : { struct: t.struct.map(field) };
  const field = (f: StreamField): unknown => {
    const out: Record<string, unknown> = { name: f.name, type: type(f.type) };
    if (f.default !== undefined) out.default = typeof f.default === "bigint" ? Number(f.default) : f.default;
    return out;
  };
  return { name: s.name, kind: s.streamKind, fields: s.fields ? s.fields.map(field) : null, options: s.options };
}

function numEq(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

/** Value comparison of the conformance rules: numbers by value (~1e-9 relative), keys unordered. */
export function deepEqual(a: unknown, b: unknown, match: GoldenCase["match"]): boolean {
  if (typeof a === "number" && typeof b === "number") return numEq(a, b);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    if (match === "unordered-arrays") return multisetEqual(a, b, match);
    return a.every((x, i) => deepEqual(x, b[i], match));
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => k in b && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], match));
}

function multisetEqual(a: unknown[], b: unknown[], match: GoldenCase["match"]): boolean {
  const used = new Array<boolean>(b.length).fill(false);
  return a.every((x) => {
    const j = b.findIndex((y, k) => !used[k] && deepEqual(x, y, match));
    if (j < 0) return false;
    used[j] = true;
    return true;
  });
}

function emissionEqual(got: unknown[], want: unknown[], match: GoldenCase["match"]): boolean {
  if (match === "unordered-rows") return got.length === want.length && multisetEqual(got, want, undefined);
  return deepEqual(got, want, match);
}

/**
 * Case files under the given paths: a file named is taken as is; a directory is searched for
 * `*.json` case files (looksLikeCases: rule .json files and other JSON beside them are passed
 * over), outside node_modules and hidden directories, sorted. `unparsed`: the .json files found
 * that are not JSON (a broken case file, or a JSONC config): named to the user, not run.
 */
export async function caseFiles(paths: string[]): Promise<{ files: string[]; unparsed: string[] }> {
  const out: string[] = [];
  const unparsed: string[] = [];
  for (const p of paths) {
    const st = await Bun.file(p).stat().catch(() => undefined);
    if (!st?.isDirectory()) {
      out.push(resolve(p));
      continue;
    }
    const found = (await Array.fromAsync(new Bun.Glob("**/*.json").scan({ cwd: p }))).filter((f) => !/(^|\/)(node_modules|\.[^/]*)\//.test(f)).sort();
    for (const f of found) {
      const file = resolve(p, f);
      let v: unknown;
      try {
        v = JSON.parse(await Bun.file(file).text());
      } catch {
        unparsed.push(file);
        continue;
      }
      if (looksLikeCases(v)) out.push(file);
    }
  }
  return { files: out, unparsed };
}
