/**
 * Graph node props decoded as eKuiper's mapstructure does (graph-rules.md §1): keys match
 * case-insensitively, JSON numbers truncate into ints, strings never convert, and a type error
 * reads `1 error(s) decoding:\n\n* '<key>' expected type '<go type>', got unconvertible type …`.
 */
import { fmtV, type Value } from "../value/values.ts";

export type Props = Record<string, unknown>;

function goType(v: unknown): string {
  if (v === null) return "<nil>";
  if (typeof v === "number") return "float64";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return "[]interface {}";
  return "map[string]interface {}";
}

function decodeError(key: string, want: string, v: unknown): Error {
  return new Error(`1 error(s) decoding:\n\n* '${key}' expected type '${want}', got unconvertible type '${goType(v)}', value: '${fmtV(v as Value)}'`);
}

/** The value of `key` in `p`, the exact spelling first, then case-insensitively. */
export function prop(p: Props, key: string): unknown {
  if (key in p) return p[key];
  const lower = key.toLowerCase();
  for (const k of Object.keys(p)) if (k.toLowerCase() === lower) return p[k];
  return undefined;
}

export function propString(p: Props, key: string, label = key): string {
  const v = prop(p, key);
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw decodeError(label, "string", v);
  return v;
}

export function propInt(p: Props, key: string, label = key): number {
  const v = prop(p, key);
  if (v === undefined || v === null) return 0;
  if (typeof v !== "number") throw decodeError(label, "int", v);
  return Math.trunc(v);
}

export function propBool(p: Props, key: string, label = key): boolean {
  const v = prop(p, key);
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") throw decodeError(label, "bool", v);
  return v;
}

export function propList(p: Props, key: string, label = key): unknown[] {
  const v = prop(p, key);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new Error(`1 error(s) decoding:\n\n* '${label}': source data must be an array or slice, got ${goType(v)}`);
  return v;
}

export function propStrings(p: Props, key: string, label = key): string[] {
  return propList(p, key, label).map((v, i) => {
    if (typeof v !== "string") throw decodeError(`${label}[${i}]`, "string", v);
    return v;
  });
}

/** A list of objects (`joins`, `sorts`): each element must be a map. */
export function propObjects(p: Props, key: string, label: string): Props[] {
  return propList(p, key, label).map((v, i) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) throw decodeError(`${label}[${i}]`, "struct", v);
    return v as Props;
  });
}
