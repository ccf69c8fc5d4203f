/** Shared by `floe run` and `floe check`: which file an error of a rule belongs to, and what it adds. */
import { createFunctionRegistry } from "../functions/index.ts";
import type { FunctionRegistry } from "../functions/registry.ts";
import { ParseError } from "../errors.ts";
import type { CreateStatement } from "../sql/ast.ts";
import { parseRuleFile, splitStatements, parseStatement } from "../sql/parse.ts";
import { diagnosis, namesOf } from "../plan/diagnose.ts";

export interface RuleSource {
  /** The file shown to the user (`rule.json (sql)` for the SQL inside a rule .json). */
  readonly file: string;
  readonly sql: string;
  readonly streamsFile?: string;
  readonly streamsSql?: string;
}

function creates(text: string | undefined, functions: FunctionRegistry): CreateStatement[] {
  if (!text) return [];
  const out: CreateStatement[] = [];
  for (const p of splitStatements(text)) {
    try {
      const s = parseStatement(p.text, functions);
      if (s.kind === "create") out.push(s);
    } catch {
      // a broken statement adds no names
    }
  }
  return out;
}

/** The lines to print below eKuiper's message for error `e` of rule `src` ("" when none). */
export function explain(e: unknown, src: RuleSource): string {
  const functions = createFunctionRegistry();
  let inRule = true;
  if (src.streamsSql !== undefined) {
    try {
      parseRuleFile(src.sql, functions);
      // The rule parses: a parse error is the streams file's; a plan error is the rule's.
      inRule = !(e instanceof ParseError);
    } catch {
      inRule = true;
    }
  }
  const names = namesOf([...creates(src.streamsSql, functions), ...creates(src.sql, functions)]);
  return inRule ? diagnosis(e, src.file, src.sql, names) : diagnosis(e, src.streamsFile ?? "streams", src.streamsSql ?? "", names);
}
