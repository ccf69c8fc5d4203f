/**
 * Lookup-table joins at plan time (sql §12.5, §6.6): each join with a lookup table splits its ON
 * condition into `tableField = expr` keys (expr not reading the table) and the other conjuncts,
 * which become a filter after the lookup. Runs after binding, so `bound` names the source.
 */
import { PlanError } from "../errors.ts";
import type { Expr, Join, SelectStatement } from "../sql/ast.ts";
import { renderExpr, type BoundField } from "../sql/render.ts";
import { some } from "../sql/walk.ts";
import { isLookupTable, type StreamDef } from "./streams.ts";

export interface LookupJoin {
  /** The join's position in the statement. */
  readonly index: number;
  readonly join: Join;
  readonly table: StreamDef;
  /** Table fields and the expressions their values must equal, in ON order. */
  readonly keys: { field: string; expr: Expr }[];
  /** ON conjuncts that are not keys. */
  readonly rest: Expr[];
}

/** The top-level AND chain of `e` (parentheses are kept: eKuiper splits only the bare chain). */
export function conjuncts(e: Expr | undefined): Expr[] {
  if (!e) return [];
  if (e.kind === "binary" && e.op === "AND") return [...conjuncts(e.left), ...conjuncts(e.right)];
  return [e];
}

export function andAll(list: readonly Expr[]): Expr | undefined {
  let out: Expr | undefined;
  for (const e of list) out = out ? { kind: "binary", op: "AND", left: out, right: e } : e;
  return out;
}

/** True if `e` reads a column of source `name` (bound references only). */
export function readsSource(e: Expr, name: string): boolean {
  return some(e, (n) => n.kind === "field" && (n as BoundField).bound === name);
}

/** Go's `%v` of eKuiper's lookup-table map; the options render as `{KEY:value …}`, not as a pointer. */
function tableMap(def: StreamDef): string {
  const opts = Object.entries(def.options)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}:${String(v)}`)
    .join(" ");
  return `map[${def.name}:{${opts}}]`;
}

export function analyzeLookups(stmt: SelectStatement, defs: ReadonlyMap<string, StreamDef>): LookupJoin[] {
  const from = defs.get(stmt.from.name);
  if (from && isLookupTable(from)) throw new PlanError(`cannot find lookup table ${tableMap(from)} in any join`);
  const out: LookupJoin[] = [];
  stmt.joins.forEach((join, index) => {
    const table = defs.get(join.source.name);
    if (!table || !isLookupTable(table)) return;
    const invalid = () =>
      new PlanError(`join condition ${join.on ? renderExpr(join.on) : "%!s(<nil>)"} is invalid, at least one equi-join predicate is required`);
    const keys: LookupJoin["keys"] = [];
    const rest: Expr[] = [];
    for (const c of conjuncts(join.on)) {
      const key = c.kind === "binary" && c.op === "=" ? keyOf(c.left, c.right, table.name) ?? keyOf(c.right, c.left, table.name) : undefined;
      if (!key) {
        rest.push(c);
        continue;
      }
      if (keys.some((k) => k.field === key.field)) throw invalid();
      keys.push(key);
    }
    if (keys.length === 0) throw invalid();
    out.push({ index, join, table, keys, rest });
  });
  return out;
}

function keyOf(field: Expr, expr: Expr, table: string): { field: string; expr: Expr } | undefined {
  if (field.kind !== "field" || (field as BoundField).bound !== table || (field as BoundField).aliasOf) return undefined;
  if (readsSource(expr, table)) return undefined;
  return { field: field.name, expr };
}
