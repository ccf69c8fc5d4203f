/**
 * Number kinds of tuple input follow a typed stream's schema: a declared FLOAT column holding a
 * whole number written `3` is the float 3, a declared BIGINT holding `3.0` the int 3
 * (conformance README, "Number typing"); a declared BYTEA column holding a string holds its base64,
 * decoded to bytes as the JSON decoder decodes it (sql §3.7). Other values are left to the preprocessor.
 */
import { isObj, type Obj, type Value } from "../value/values.ts";
import type { FieldType, StreamField } from "../sql/ast.ts";

function coerce(v: Value, t: FieldType): Value {
  if (t === "float") return typeof v === "bigint" ? Number(v) : v;
  if (t === "bigint") return typeof v === "number" && Number.isInteger(v) ? BigInt(v) : v;
  if (t === "bytea") return typeof v === "string" ? new Uint8Array(Buffer.from(v, "base64")) : v;
  if (typeof t === "string") return v;
  if ("array" in t) return Array.isArray(v) ? v.map((x) => coerce(x, t.array)) : v;
  return isObj(v) ? coerceToSchema(v, t.struct) : v;
}

export function coerceToSchema(row: Obj, fields: StreamField[]): Obj {
  for (const f of fields) {
    const v = row[f.name];
    if (v !== undefined && v !== null) row[f.name] = coerce(v, f.type);
  }
  return row;
}
