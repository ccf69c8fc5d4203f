/**
 * SQL text → AST. Wraps the peggy parser generated from the grammar (grammar/): statement splitting,
 * function lookup and validation hooks, the SELECT post-processing (select.ts) and CREATE option
 * conversion (create.ts), and peggy errors → ParseError with eKuiper's text and a position.
 */
import { CompileBudgetError, EngineError, ErrCode, ParseError } from "../errors.ts";
import { compileLimits, DEFAULT_COMPILE_LIMITS } from "../value/compile-budget.ts";
import type { CreateStatement, Expr, SelectStatement, Statement } from "./ast.ts";
import type { FunctionSignatures } from "./function-signatures.ts";
import { finishCreate, type RawCreate } from "./create.ts";
import { checkAstDepth, scanSqlDepth } from "./depth.ts";
import { parse as pegParse, SyntaxError as PegSyntaxError } from "../../generated/sql/parser.js";
import { finishSelect } from "./select.ts";
import { validateWindowArgs, WINDOW_NAMES } from "./window-args.ts";

const PSEUDO_FUNCTIONS = new Set([...WINDOW_NAMES, "dedup_trigger"]);

/** The grammar's hooks for call names, answered by the functions the caller passes in. */
function hooks(functions: FunctionSignatures) {
  return {
    isFunction(name: string): boolean {
      const lower = name.toLowerCase();
      return PSEUDO_FUNCTIONS.has(lower) || functions.kind(lower) !== undefined;
    },
    validate(name: string, args: unknown[]): string | undefined {
      const exprs = args as Expr[];
      if (WINDOW_NAMES.has(name)) return validateWindowArgs(name, exprs);
      if (name === "dedup_trigger") return validateDedupTrigger(exprs);
      const msg = functions.validate(name, exprs);
      return msg === undefined ? undefined : `validate function ${name} error: ${msg}`;
    },
  };
}

function validateDedupTrigger(args: Expr[]): string | undefined {
  if (args.length !== 4) return "dedup_trigger function should have 4 arguments";
  const ordinal = ["first", "second", "third"];
  for (let i = 0; i < 3; i++) {
    if (args[i]!.kind !== "field")
      return `dedup_trigger function should have fieldRef as the ${ordinal[i]} argument`;
  }
  if (args[3]!.kind !== "integer") return "dedup_trigger function should have integer as the fourth argument";
  return undefined;
}

/** 1-based line and column of `offset` in `text`. */
function position(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** The token at `offset`, as eKuiper would print it in a "found" message. */
function tokenAt(text: string, offset: number): string {
  const m = /^\s*([A-Za-z][A-Za-z0-9_]*|[0-9.]+|"[^"]*"?|'[^']*'?|\S)/.exec(text.slice(offset));
  return m ? m[1]! : "EOF";
}

/**
 * The longest SQL statement floe parses by default, in characters (the compile budget's
 * `sqlLength`). The parser is synchronous (~0.5–1 µs per character on wide projections) and the
 * daemon has one thread: a statement at the limit parses in tens of ms, an 8 MB one would stop
 * every rule for seconds (bench/limits.ts, docs/compile-budget.md).
 */
export const MAX_SQL_LENGTH = DEFAULT_COMPILE_LIMITS.sqlLength;

/** What a statement nesting deeper than the parser's stack can hold is refused with. */
export const SQL_TOO_DEEP = "the SQL statement nests too deeply";

function runParser(text: string, startRule: "Statement" | "SelectStatement" | "CreateStatement", functions: FunctionSignatures, base = 0, full = text): unknown {
  const max = compileLimits().sqlLength;
  if (text.length > max) throw new CompileBudgetError(`the SQL statement is ${text.length} characters long, more than the limit of ${max}`, "sqlLength");
  scanSqlDepth(text);
  try {
    const raw = pegParse(text, { startRule, ...hooks(functions) });
    checkAstDepth(raw);
    return raw;
  } catch (e) {
    if (e instanceof CompileBudgetError) throw e;
    if (e instanceof RangeError) {
      const { line, column } = position(full, base);
      throw new ParseError(SQL_TOO_DEEP, line, column);
    }
    if (e instanceof PegSyntaxError) {
      const offset = base + e.location.start.offset;
      const { line, column } = position(full, offset);
      let message = e.message;
      if (e.expected) {
        // peggy's own message: recast in eKuiper's "found X, expected Y." shape.
        const want = e.expected.find((x) => x.type === "literal")?.text ?? "expression";
        message = `found ${JSON.stringify(tokenAt(text, e.location.start.offset))}, expected ${want}.`;
      }
      throw new ParseError(message, line, column);
    }
    if (e instanceof EngineError) {
      const { line, column } = position(full, base);
      throw new ParseError(e.message, line, column);
    }
    throw e;
  }
}

/** Post-processing; its errors are parse errors at the statement's start. */
function finish(raw: unknown, functions: FunctionSignatures, base = 0, full = ""): Statement {
  const s = raw as Statement | RawCreate;
  try {
    if (s.kind === "select") return finishSelect(s, functions);
    if (s.kind === "create") return finishCreate(s as RawCreate);
    return s;
  } catch (e) {
    if (e instanceof RangeError) {
      const { line, column } = position(full, base);
      throw new ParseError(SQL_TOO_DEEP, line, column);
    }
    if (!(e instanceof EngineError) || e instanceof ParseError || e.code !== ErrCode.parser) throw e;
    const { line, column } = position(full, base);
    throw new ParseError(e.message, line, column);
  }
}

/** Parses one statement (a trailing `;` and anything after it are ignored, as eKuiper does). */
export function parseStatement(text: string, functions: FunctionSignatures, base = 0, full = text): Statement {
  return finish(runParser(cutAtSemicolon(text), "Statement", functions, base, full), functions, base, full);
}

/** Parses rule SQL: one SELECT. Errors are eKuiper's parser messages (without the rule wrapper). */
export function parseSelect(text: string, functions: FunctionSignatures): SelectStatement {
  const s = finish(runParser(cutAtSemicolon(text), "SelectStatement", functions), functions, 0, text);
  return s as SelectStatement;
}

export interface RuleFile {
  creates: CreateStatement[];
  select: SelectStatement;
}

/** A `.sql` rule file: any number of CREATE STREAM/TABLE statements, then exactly one SELECT. */
export function parseRuleFile(text: string, functions: FunctionSignatures): RuleFile {
  const parts = splitStatements(text);
  const creates: CreateStatement[] = [];
  let select: SelectStatement | undefined;
  for (const p of parts) {
    if (select) {
      const { line, column } = position(text, p.offset);
      throw new ParseError("a rule file holds exactly one SELECT, after the CREATE statements", line, column);
    }
    const s = firstWord(p.text) === "CREATE"
      ? finish(runParser(p.text, "CreateStatement", functions, p.offset, text), functions, p.offset, text)
      : finish(runParser(p.text, "SelectStatement", functions, p.offset, text), functions, p.offset, text);
    if (s.kind === "create") creates.push(s);
    else select = s as SelectStatement;
  }
  if (!select) throw new EngineError("the rule file has no SELECT statement", ErrCode.parser);
  return { creates, select };
}

/**
 * A streams file (`floe run --streams`): CREATE STREAM/TABLE statements only, each parsed with the
 * CreateStatement rule; any other statement is a parse error at its start.
 */
export function parseCreates(text: string, functions: FunctionSignatures): CreateStatement[] {
  const out: CreateStatement[] = [];
  for (const p of splitStatements(text)) {
    if (firstWord(p.text) !== "CREATE") {
      const { line, column } = position(text, p.offset + /^\s*/.exec(p.text)![0].length);
      throw new ParseError("a streams file holds only CREATE STREAM and CREATE TABLE statements", line, column);
    }
    out.push(finish(runParser(p.text, "CreateStatement", functions, p.offset, text), functions, p.offset, text) as CreateStatement);
  }
  return out;
}

/** The first word of a statement, upper-cased, after leading comments. */
function firstWord(text: string): string | undefined {
  return /^\s*(?:(?:--[^\n]*|\/\*[\s\S]*?\*\/)\s*)*([A-Za-z]*)/.exec(text)?.[1]?.toUpperCase();
}

/**
 * Splits text at top-level `;` (outside strings, back-quotes and comments); each part keeps its
 * `;` and its offset in the text. Blank and comment-only parts are dropped.
 */
export function splitStatements(text: string): { text: string; offset: number }[] {
  const out: { text: string; offset: number }[] = [];
  let start = 0;
  let i = 0;
  const push = (end: number) => {
    const part = text.slice(start, end);
    if (part.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, "").trim()) out.push({ text: part, offset: start });
    start = end;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' || c === "'" || c === "`") {
      i++;
      while (i < text.length && text[i] !== c) i += text[i] === "\\" && c !== "`" ? 2 : 1;
      i++;
    } else if (c === "-" && text[i + 1] === "-") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === ";") {
      i++;
      push(i);
    } else i++;
  }
  push(text.length);
  return out;
}

/** eKuiper's REST/CLI paths parse exactly one statement: text after the first `;` is ignored. */
function cutAtSemicolon(text: string): string {
  const parts = splitStatements(text);
  return parts.length > 0 ? parts[0]!.text : text;
}
