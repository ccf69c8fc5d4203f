/**
 * eKuiper's `String()` form of an expression (sql §19), which error messages embed. Column
 * references render with the stream they were bound to by the planner (`src.a`), or `$$default`.
 */
import type { Expr, FieldRef } from "./ast.ts";
import { formatFloatG } from "../value/values.ts";
import { compileLikeSource } from "./like.ts";

/** Binding annotations the planner attaches to field references. */
export interface BoundField extends FieldRef {
  /** Stream the reference was bound to; absent = any stream (`$$default`). */
  bound?: string;
  /** Set when the reference names a select alias. */
  aliasOf?: Expr;
}

export function renderExpr(e: Expr): string {
  switch (e.kind) {
    case "integer":
      return e.value.toString();
    case "number":
      return formatFloatG(e.value);
    case "string":
      return e.value;
    case "boolean":
      return e.value ? "true" : "false";
    case "timeUnit":
      return e.unit;
    case "wildcard":
      return "*";
    case "field": {
      const f = e as BoundField;
      if (f.aliasOf) return `$$alias.${f.name},aliasRef:${renderExpr(f.aliasOf)}`;
      return `${f.bound ?? f.stream ?? "$$default"}.${f.name}`;
    }
    case "meta":
      return `metaRef:{ streamName:${e.stream ?? "$$default"}, fieldName:${e.name} }`;
    case "binary":
      return `binaryExpr:{ ${renderExpr(e.left)} ${e.op} ${renderExpr(e.right)} }`;
    case "arrow": {
      const r = e.right.kind === "field" ? `jsonFieldName:${e.right.name}` : renderExpr(e.right);
      return `binaryExpr:{ ${renderExpr(e.left)} -> ${r} }`;
    }
    case "index":
      return `binaryExpr:{ ${renderExpr(e.left)}[${renderExpr(e.index)}] }`;
    case "slice": {
      const s = e.start ? renderExpr(e.start) : "0";
      const end = e.end ? renderExpr(e.end) : "-2147483648";
      return `binaryExpr:{ ${renderExpr(e.left)}[ColonExpr:{ start:{ ${s} }, end:{ ${end} } }] }`;
    }
    case "paren":
      return `parenExpr:{ ${renderExpr(e.expr)} }`;
    case "call": {
      let s = `Call:{ name:${e.name}`;
      const args = e.name === "changed_cols" ? e.args.map(renderColFuncField) : e.args.map(renderExpr);
      if (args.length) s += `, args:[${args.join(", ")}]`;
      if (e.over?.when) s += `, when:{ ${renderExpr(e.over.when)} }`;
      return s + " }";
    }
    case "case": {
      const v = e.value ? `value:{ ${renderExpr(e.value)} }, ` : "";
      const w = e.whens.map((c) => `{ whenClause:{ ${renderExpr(c.cond)} } }`).join(", ");
      return `caseExprValue:{ ${v}whenClauses:[${w}] }`;
    }
    case "in": {
      const op = e.not ? "NOT IN" : "IN";
      const r = e.list
        ? `valueSetExpr:{ literalExprs:[${e.list.map(renderExpr).join(", ")}] }`
        : renderExpr(e.set!);
      return `binaryExpr:{ ${renderExpr(e.left)} ${op} ${r} }`;
    }
    case "between":
      return `binaryExpr:{ ${renderExpr(e.left)} ${e.not ? "NOT BETWEEN" : "BETWEEN"} betweenExpr:{ ${renderExpr(e.low)}, ${renderExpr(e.high)} } }`;
    case "like": {
      const p = e.pattern.kind === "string" ? `likePattern:${compileLikeSource(e.pattern.value)}` : renderExpr(e.pattern);
      return `binaryExpr:{ ${renderExpr(e.left)} ${e.not ? "NOT LIKE" : "LIKE"} ${p} }`;
    }
  }
}

/** The column name a changed_cols argument contributes (functions §5.1). */
export function colFuncFieldName(e: Expr): string {
  return e.kind === "field" ? e.name : e.kind === "call" ? e.name : "";
}

/** changed_cols arguments render as eKuiper's ColFuncField. */
function renderColFuncField(e: Expr): string {
  return `colFuncField:{ name: ${colFuncFieldName(e)}, expr:{ ${renderExpr(e)} } }`;
}
