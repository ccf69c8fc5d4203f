/**
 * Errors for people (the CLI and the console's editor; REST keeps eKuiper's strings): below
 * eKuiper's message, where the error is (`file:line:col`), the source line with a caret under the
 * token, and "did you mean" for a misspelt column, function, keyword or stream name.
 *
 * A parse error carries its position. A plan error does not (the AST keeps no offsets), so the
 * name it complains about is looked up in the SELECT statement's text, outside strings and comments.
 */
import { ParseError, PlanError } from "../errors.ts";
import { createFunctionRegistry } from "../functions/index.ts";
import { splitStatements } from "../sql/parse.ts";
import type { CreateStatement, StreamField } from "../sql/ast.ts";
import { closest, editDistance } from "./suggest.ts";

/** Keywords a misspelling is compared with (`SELEC` → `SELECT`). */
const KEYWORDS = ["SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "CREATE", "STREAM", "TABLE", "WITH", "AS", "AND", "OR", "NOT", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "JOIN", "ON", "CASE", "WHEN", "THEN", "ELSE", "END", "IN", "BETWEEN", "LIKE", "IS", "NULL", "ASC", "DESC", "TRUE", "FALSE", "FILTER", "OVER", "PARTITION"];

export interface Names {
  readonly columns: string[];
  readonly streams: string[];
}

/** Column and stream names declared by CREATE statements. */
export function namesOf(creates: CreateStatement[]): Names {
  const columns: string[] = [];
  const walk = (fs: StreamField[]) => {
    for (const f of fs) columns.push(f.name);
  };
  for (const c of creates) if (c.fields) walk(c.fields);
  return { columns, streams: creates.map((c) => c.name) };
}

export interface Spot {
  readonly line: number;
  readonly column: number;
  readonly length: number;
}

function lineCol(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}

/** Offset of `word` as a whole identifier in `text` from `from`, skipping strings and comments; -1 if absent. */
function findWord(text: string, word: string, from: number): number {
  const masked = text.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|--[^\n]*|\/\*[\s\S]*?\*\//g, (m) => " ".repeat(m.length));
  const re = new RegExp(`(?<![\\w.\`])\`?${word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\`?(?![\\w\`])`, "g");
  re.lastIndex = from;
  const m = re.exec(masked);
  return m ? m.index : -1;
}

/** What the message names and the candidates it may be a misspelling of. */
function subject(e: Error, names: Names): { word: string; candidates: string[]; what: string } | undefined {
  let m: RegExpExecArray | null;
  if (e instanceof ParseError && (m = /[Ff]ound "([^"]+)"/.exec(e.message)) && /^[A-Za-z_]+$/.test(m[1]!)) return { word: m[1]!, candidates: KEYWORDS, what: "keyword" };
  if ((m = /^unknown field (?:(\w+)\.)?(\S+)$/.exec(e.message))) return { word: m[2]!, candidates: names.columns, what: "column" };
  if ((m = /function (\S+) not found/.exec(e.message))) return { word: m[1]!, candidates: createFunctionRegistry().names(), what: "function" };
  if ((m = /^fail to get stream (\S+),/.exec(e.message)) || (m = /^stream (\S+) not found$/.exec(e.message))) return { word: m[1]!, candidates: names.streams, what: "stream" };
  return undefined;
}

/**
 * A parse error often shows after the misspelt keyword (`FROM demo WHER a > 1` fails at `>`:
 * `WHER` read as an alias): the last word before the error, outside strings and comments, that is
 * one edit from a keyword and is not a declared name. Words under four letters are not guessed at.
 */
function misspeltKeyword(text: string, offset: number, names: Names): { word: string; at: number; keyword: string } | undefined {
  const masked = text.slice(0, offset).replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`|--[^\n]*|\/\*[\s\S]*?\*\//g, (m) => " ".repeat(m.length));
  const declared = new Set([...names.columns, ...names.streams].map((n) => n.toLowerCase()));
  let found: { word: string; at: number; keyword: string } | undefined;
  for (const m of masked.matchAll(/(?<![\w.])[A-Za-z_]{4,}(?![\w(])/g)) {
    const w = m[0];
    if (declared.has(w.toLowerCase()) || KEYWORDS.includes(w.toUpperCase())) continue;
    const k = KEYWORDS.find((kw) => kw.length >= 4 && editDistance(w, kw) === 1);
    if (k) found = { word: w, at: m.index, keyword: k };
  }
  return found;
}

/** Where error `e` is in `text` and the name it may be a misspelling of; undefined for other errors. */
export interface Diagnosis {
  readonly spot?: Spot;
  /** The close name, and what it is (`column`, `function`, `keyword`, `stream`). */
  readonly suggestion?: { readonly name: string; readonly what: string };
}

export function diagnose(e: unknown, text: string, names: Names): Diagnosis | undefined {
  if (!(e instanceof ParseError) && !(e instanceof PlanError)) return undefined;
  let subj = subject(e, names);
  let spot: Spot | undefined;
  const errorAt = e instanceof ParseError ? text.split("\n").slice(0, e.line - 1).reduce((n, l) => n + l.length + 1, 0) + e.column - 1 : 0;
  const typo = e instanceof ParseError && (!subj || closest(subj.word, subj.candidates) === undefined) ? misspeltKeyword(text, errorAt, names) : undefined;
  if (typo) {
    subj = { word: typo.word, candidates: [typo.keyword], what: "keyword" };
    spot = { ...lineCol(text, typo.at), length: typo.word.length };
  } else if (e instanceof ParseError) {
    const found = /[Ff]ound "([^"]+)"/.exec(e.message)?.[1];
    spot = { line: e.line, column: e.column, length: found && found !== "EOF" ? found.length : 1 };
    // eKuiper places "function f not found" at the `(`: the caret goes under the name.
    if (subj?.what === "function") {
      const lineStart = text.split("\n").slice(0, e.line - 1).reduce((n, l) => n + l.length + 1, 0);
      const at = findWord(text, subj.word, lineStart);
      if (at >= 0 && at < lineStart + e.column) spot = { ...lineCol(text, at), length: subj.word.length };
    }
  } else if (subj) {
    const parts = splitStatements(text);
    const from = parts.length ? parts[parts.length - 1]!.offset : 0;
    const at = findWord(text, subj.word, from);
    if (at >= 0) spot = { ...lineCol(text, at), length: subj.word.length };
  }
  const c = subj ? closest(subj.word, subj.candidates) : undefined;
  return { spot, suggestion: c !== undefined ? { name: c, what: subj!.what } : undefined };
}

/**
 * The lines shown below eKuiper's message: `  at FILE:LINE:COL`, the source line and a caret,
 * and `  did you mean X?` when a close name exists. "" when nothing can be added.
 */
export function diagnosis(e: unknown, file: string, text: string, names: Names): string {
  const d = diagnose(e, text, names);
  if (!d) return "";
  const spot = d.spot;
  let out = "";
  if (spot) {
    const src = (text.split("\n")[spot.line - 1] ?? "").replace(/\t/g, " ");
    const gutter = String(spot.line);
    out += `  at ${file}:${spot.line}:${spot.column}\n`;
    out += `  ${gutter} | ${src}\n`;
    out += `  ${" ".repeat(gutter.length)} | ${" ".repeat(Math.max(0, spot.column - 1))}${"^".repeat(Math.max(1, Math.min(spot.length, src.length - spot.column + 1)))}\n`;
  } else out += `  in ${file}\n`;
  if (d.suggestion) out += `  did you mean ${d.suggestion.name}? (a ${d.suggestion.what})\n`;
  return out;
}
