/**
 * The projection of a SELECT list (sql.md §5), shared by SQL rules and graph `pick` nodes: columns
 * copied by name, expressions and aliases compiled once, a wildcard with its EXCEPT and REPLACE.
 */
import type { Evaluator } from "../expr/compile.ts";
import type { Expr, SelectStatement } from "../sql/ast.ts";
import { renderExpr, type BoundField } from "../sql/render.ts";
import type { ProjectField, ProjectSpec } from "./specs.ts";

export interface ProjectFlags {
  readonly sendNil?: boolean;
  readonly sendMetaToSink?: boolean;
  readonly ignoreCase?: boolean;
}

export function projectSpecOf(
  stmt: SelectStatement,
  compile: (e: Expr, aggregate: boolean) => Evaluator,
  aggregate: boolean,
  flags: ProjectFlags,
): ProjectSpec {
  const field = (name: string, expr: Expr, alias: string | undefined, invisible: boolean): ProjectField => ({
    name,
    eval: compile(expr, aggregate),
    invisible,
    multi: alias === undefined && expr.kind === "call" && expr.name === "changed_cols",
    errorContext: alias !== undefined ? `alias: ${alias} expr: ${renderExpr(expr)}` : `expr: ${renderExpr(expr)}`,
  });
  let wildcard: ProjectSpec["wildcard"];
  const columns: ProjectSpec["columns"] = [];
  const exprs: ProjectField[] = [];
  const aliases: ProjectField[] = [];
  for (const f of stmt.fields) {
    const e = f.expr;
    if (e.kind === "wildcard") {
      wildcard = { stream: e.stream, except: new Set(e.except) };
      for (const r of e.replace) aliases.push(field(r.name, r.expr, r.alias ?? r.name, false));
    } else if (f.alias !== undefined) {
      aliases.push(field(f.name, e, f.alias, f.invisible));
    } else if (e.kind === "field" && !(e as BoundField).aliasOf) {
      if (!f.invisible) columns.push({ name: f.name, column: e.name, stream: (e as BoundField).bound });
    } else {
      exprs.push(field(f.name, e, undefined, f.invisible));
    }
  }
  return {
    wildcard,
    columns,
    exprs,
    aliases,
    aggregate,
    sendNil: !!flags.sendNil,
    sendMeta: !!flags.sendMetaToSink,
    ignoreCase: !!flags.ignoreCase,
    limit: stmt.limit,
  };
}
