/**
 * Fixture values in JSON: a plain number is a float64, `{"$int": "12"}` an int64, `{"$bytes": "<base64>"}`
 * bytes; arrays and objects nest. Validator fixtures describe argument syntax as `{"int": 1}`,
 * `{"float": 1.5}`, `{"str": "x"}`, `{"bool": true}`, `{"time": "SS"}`, `{"field": "a"}`, `{"cmp": true}`.
 */
import type { Value } from "../../lib/value/values.ts";
import type { Expr, TimeUnit } from "../../lib/sql/ast.ts";

export function decodeValue(j: unknown): Value {
  if (j === null || typeof j === "string" || typeof j === "number" || typeof j === "boolean") return j;
  if (Array.isArray(j)) return j.map(decodeValue);
  const o = j as Record<string, unknown>;
  if (typeof o.$int === "string") return BigInt(o.$int);
  if (typeof o.$bytes === "string") return new Uint8Array(Buffer.from(o.$bytes, "base64"));
  const out: { [k: string]: Value } = {};
  for (const [k, v] of Object.entries(o)) out[k] = decodeValue(v);
  return out;
}

export function decodeArgExpr(j: Record<string, unknown>): Expr {
  if ("int" in j) return { kind: "integer", value: BigInt(j.int as number) };
  if ("float" in j) return { kind: "number", value: j.float as number };
  if ("str" in j) return { kind: "string", value: j.str as string };
  if ("bool" in j) return { kind: "boolean", value: j.bool as boolean };
  if ("time" in j) return { kind: "timeUnit", unit: j.time as TimeUnit };
  if ("cmp" in j)
    return { kind: "binary", op: "=", left: { kind: "field", name: "a" }, right: { kind: "field", name: "b" } };
  return { kind: "field", name: j.field as string };
}
