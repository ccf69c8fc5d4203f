/**
 * Loads function test tables from fixtures/functions/*.json. Number literals keep Go's kinds:
 * `1` is an int64 (bigint), `1.0` / `1.5` / `1e3` a float64. `{"$bytes": "hi"}` is a byte
 * array, `{"$float": "NaN" | "Infinity" | "-Infinity" | "-0"}` a special float.
 */
import { readFileSync } from "node:fs";
import type { Value } from "../../lib/value/values.ts";
import type { Expr, TimeUnit } from "../../lib/sql/ast.ts";

export interface CallCase {
  fn: string;
  args: Value[];
  want?: Value;
  /** The full error message, `call func <f> error: ` prefix included when eKuiper has it. */
  err?: string;
  /** Compare floats with a relative tolerance of 1e-12 (libm last-bit differences). */
  approx?: boolean;
}

export interface ValidateCase {
  fn: string;
  /** Argument syntax: `int:1`, `num:1.5`, `str:x`, `bool:true`, `col:a`, `unit:SS`, `cmp`, `plus`. */
  validate: string[];
  want: string | null;
}

function revive(this: unknown, _k: string, v: unknown, ctx?: { source?: string }): unknown {
  if (typeof v === "number") {
    const src = ctx?.source ?? String(v);
    return /^-?\d+$/.test(src) ? BigInt(src) : v;
  }
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if (typeof o.$bytes === "string") return new TextEncoder().encode(o.$bytes);
    if (typeof o.$float === "string") return o.$float === "-0" ? -0 : Number(o.$float);
  }
  return v;
}

export function loadCases(file: string): { calls: CallCase[]; validations: ValidateCase[] } {
  const text = readFileSync(new URL(`../../fixtures/functions/${file}`, import.meta.url), "utf8");
  const all = JSON.parse(text, revive as (k: string, v: unknown) => unknown) as (CallCase | ValidateCase)[];
  return {
    calls: all.filter((c): c is CallCase => "args" in c),
    validations: all.filter((c): c is ValidateCase => "validate" in c),
  };
}

/** The argument expression a `ValidateCase` token stands for. */
export function argExpr(tok: string): Expr {
  const i = tok.indexOf(":");
  const kind = i < 0 ? tok : tok.slice(0, i);
  const text = tok.slice(i + 1);
  switch (kind) {
    case "int":
      return { kind: "integer", value: BigInt(text) };
    case "num":
      return { kind: "number", value: Number(text) };
    case "str":
      return { kind: "string", value: text };
    case "bool":
      return { kind: "boolean", value: text === "true" };
    case "col":
      return { kind: "field", name: text };
    case "unit":
      return { kind: "timeUnit", unit: text as TimeUnit };
    case "cmp":
      return { kind: "binary", op: ">", left: { kind: "field", name: "a" }, right: { kind: "integer", value: 1n } };
    case "plus":
      return { kind: "binary", op: "+", left: { kind: "field", name: "a" }, right: { kind: "integer", value: 1n } };
  }
  throw new Error(`unknown argument token ${tok}`);
}

/** Deep equality that keeps int64 and float64 apart, optionally with a float tolerance. */
export function sameValue(got: Value, want: Value, approx = false): boolean {
  if (typeof got === "number" && typeof want === "number") {
    if (Number.isNaN(want)) return Number.isNaN(got);
    if (Object.is(got, want)) return true;
    return approx && Math.abs(got - want) <= 1e-12 * Math.max(Math.abs(got), Math.abs(want));
  }
  if (Array.isArray(got) && Array.isArray(want)) {
    return got.length === want.length && got.every((g, i) => sameValue(g, want[i]!, approx));
  }
  if (got instanceof Uint8Array && want instanceof Uint8Array) {
    return got.length === want.length && got.every((b, i) => b === want[i]);
  }
  if (got && want && typeof got === "object" && typeof want === "object") {
    if (Array.isArray(got) || Array.isArray(want)) return false;
    const g = got as Record<string, Value>;
    const w = want as Record<string, Value>;
    const gk = Object.keys(g);
    const wk = Object.keys(w);
    return gk.length === wk.length && wk.every((k) => Object.hasOwn(g, k) && sameValue(g[k]!, w[k]!, approx));
  }
  return got === want;
}
