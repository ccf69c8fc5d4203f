/**
 * Number kinds of tuple input follow a typed stream's schema: a declared FLOAT column holding a
 * whole number written `3` is the float 3, a declared BIGINT holding `3.0` the int 3
 * (conformance README, "Number typing"); a declared BYTEA column holding a string holds its base64,
 * decoded to bytes as the JSON decoder decodes it (sql §3.7). Other values are left to the preprocessor.
 *
 * A row on the bus may be read by several rules at once (a shared stream, a memory topic's
 * subscribers), so it is never written: a row that needs a coercion is copied first, and one that
 * needs none is returned as it is.
 */
import { isObj, type Obj, type Value } from "../value/values.ts";
import type { FieldType, StreamField } from "../sql/ast.ts";

function coerce(v: Value, t: FieldType): Value {
  if (t === "float") return typeof v === "bigint" ? Number(v) : v;
  if (t === "bigint") return typeof v === "number" && Number.isInteger(v) ? BigInt(v) : v;
  if (t === "bytea") return typeof v === "string" ? new Uint8Array(Buffer.from(v, "base64")) : v;
  if (typeof t === "string") return v;
  if ("array" in t) {
    if (!Array.isArray(v)) return v;
    let out: Value[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const c = coerce(v[i]!, t.array);
      if (c === v[i]) continue;
      out ??= v.slice();
      out[i] = c;
    }
    return out ?? v;
  }
  return isObj(v) ? coerceToSchema(v, t.struct) : v;
}

/** `row` with its declared columns coerced: `row` itself when nothing changes, else a copy. */
export function coerceToSchema(row: Obj, fields: StreamField[]): Obj {
  let out: Obj | null = null;
  for (const f of fields) {
    const v = row[f.name];
    if (v === undefined || v === null) continue;
    const c = coerce(v, f.type);
    if (c === v) continue;
    out ??= { ...row };
    out[f.name] = c;
  }
  return out ?? row;
}
