/**
 * Post-processing of a parsed SELECT (sql §4.3, §6.1, §6.5): `x.y` becomes JSON access when `x`
 * is not a source, output names are assigned, and the parse-time placement checks run.
 */
import { EngineError, ErrCode } from "../errors.ts";
import type { Expr, Field, SelectStatement } from "./ast.ts";
import type { FunctionSignatures } from "./function-signatures.ts";
import { renderExpr } from "./render.ts";
import { clauseExprs, mapExpr, mapSelect, some } from "./walk.ts";

const kindIs = (functions: FunctionSignatures, kind: string) => (e: Expr) => e.kind === "call" && functions.kind(e.name) === kind;
const isChangedCols = (e: Expr) => e.kind === "call" && e.name === "changed_cols";

function parseError(message: string): EngineError {
  return new EngineError(message, ErrCode.parser);
}

export function finishSelect(raw: SelectStatement, functions: FunctionSignatures): SelectStatement {
  const sources = new Set<string>();
  for (const src of [raw.from, ...raw.joins.map((j) => j.source)]) {
    sources.add(src.name);
    if (src.alias) sources.add(src.alias);
  }
  const s = mapSelect(raw, (e) => qualify(e, sources));
  nameFields(s.fields);
  check(s, functions);
  return s;
}

/** `x.y` with `x` not a source is `x -> y` (sql §5.2); likewise inside meta(). */
function qualify(e: Expr, sources: Set<string>): Expr {
  return mapExpr(e, (n) => {
    if ((n.kind === "field" || n.kind === "meta") && n.stream !== undefined && !sources.has(n.stream)) {
      return {
        kind: "arrow",
        left: n.kind === "field" ? { kind: "field", name: n.stream } : { kind: "meta", name: n.stream },
        right: { kind: "field", name: n.name },
      };
    }
    return n;
  });
}

/** Default output names (sql §4.3): alias, column name, lower-case function name, kuiper_field_n. */
function nameFields(fields: Field[]): void {
  let unnamed = 0;
  const name = (f: Field) => {
    if (f.alias !== undefined) f.name = f.alias;
    else if (f.expr.kind === "field") f.name = f.expr.name;
    else if (f.expr.kind === "call") f.name = f.expr.name;
    else if (f.expr.kind === "wildcard") f.name = "";
    else f.name = `kuiper_field_${unnamed++}`;
  };
  for (const f of fields) {
    name(f);
    if (f.expr.kind === "wildcard") for (const r of f.expr.replace) name(r);
  }
}

function check(s: SelectStatement, functions: FunctionSignatures): void {
  const isAggregate = kindIs(functions, "aggregate");
  const isSrf = kindIs(functions, "srf");
  const isWindowFunc = kindIs(functions, "window");
  const clauses = clauseExprs(s);
  if (clauses.some((e) => some(e, isChangedCols)))
    throw parseError("function changed_cols can only be used inside the select clause");
  // [quirk] a statement ending with `;` skips these checks (sql §4.12); the planner re-checks some.
  if (s.semicolon) return;
  for (const g of s.groupBy) {
    if (some(g, isAggregate))
      throw parseError(`Not allowed to call aggregate functions in GROUP BY clause: ${renderExpr(g)}.`);
  }
  if (clauses.some((e) => some(e, isSrf))) throw parseError("select statement shouldn't has srf except fields");
  let srfCount = 0;
  for (const f of s.fields) {
    const e = f.expr;
    if (isSrf(e)) {
      srfCount++;
      if (e.kind === "call" && e.args.some((a) => some(a, isSrf)))
        throw parseError("select clause shouldn't has nested set-returning-functions");
    } else if (some(e, isSrf)) {
      throw parseError("select clause shouldn't has nested set-returning-functions");
    }
  }
  if (srfCount > 1) throw parseError("select clause shouldn't has multi set-returning-functions");
  if (clauses.some((e) => some(e, isWindowFunc))) throw parseError("window functions can only be in select fields");
}
