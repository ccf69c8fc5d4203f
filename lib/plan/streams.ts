/** Stream and table definitions as the planner sees them (sql §3). */
import type { CreateStatement, StreamField, StreamOptions } from "../sql/ast.ts";

export interface StreamDef {
  readonly name: string;
  readonly kind: "stream" | "table";
  /** null: schemaless. */
  readonly fields: StreamField[] | null;
  readonly options: StreamOptions;
  /** The CREATE statement text, as stored and shown by DESCRIBE / REST. */
  readonly statement: string;
}

export function streamDef(c: CreateStatement, statement = ""): StreamDef {
  return { name: c.name, kind: c.streamKind, fields: c.fields, options: c.options, statement };
}

/** Declared field by case-insensitive name (sql §6.3). */
export function findField(def: StreamDef, name: string): StreamField | undefined {
  if (!def.fields) return undefined;
  const lower = name.toLowerCase();
  return def.fields.find((f) => f.name.toLowerCase() === lower);
}

/** RETAIN_SIZE with eKuiper's defaults: 9999 for file (or no) TYPE, else 1 (sql §3.4). */
export function retainSize(def: StreamDef): number {
  const n = def.options.RETAIN_SIZE ?? 0;
  if (n > 0) return n;
  const type = (def.options.TYPE ?? "").toLowerCase();
  return type === "" || type === "file" ? 9999 : 1;
}

export function formatOf(def: StreamDef): string {
  return (def.options.FORMAT ?? "json").toLowerCase();
}

/** A lookup table (`KIND="lookup"`, sql §3.5): queried per row, never a data source of the rule. */
export function isLookupTable(def: StreamDef): boolean {
  return def.kind === "table" && (def.options.KIND ?? "").toLowerCase() === "lookup";
}
