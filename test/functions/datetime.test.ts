import { describe, expect, test } from "bun:test";
import { invoke, lookupBuiltin } from "../../lib/functions/index.ts";
import cases from "../../fixtures/functions/datetime.json";
import { DateTime, Duration, formatGoTimeString, UTC, zoneByName, type Zone } from "../../lib/value/time.ts";
import type { Value } from "../../lib/value/values.ts";
import type { Expr } from "../../lib/sql/ast.ts";
import { RowError } from "../../lib/errors.ts";
import { ctxFor, testEnv } from "./env.ts";

function zone(name: string): Zone {
  const z = zoneByName(name);
  if (!z) throw new Error(`zone ${name} missing: install the tzdata package`);
  return z;
}

/** Fixture encoding: {"int": "1"} is an int64, {"time": ms, "zone": z} a datetime, the rest JSON. */
function decode(v: unknown): Value {
  if (v !== null && typeof v === "object") {
    const o = v as { int?: string; time?: number; zone?: string };
    if (o.int !== undefined) return BigInt(o.int);
    if (o.time !== undefined) return new DateTime(o.time, 0, zone(o.zone ?? "UTC"));
  }
  return v as Value;
}

function encode(v: Value): unknown {
  if (typeof v === "bigint") return { int: v.toString() };
  if (v instanceof Duration) return { duration: v.toString() };
  if (v instanceof DateTime) return { time: formatGoTimeString(v) };
  return v;
}

/** Validator fixture arguments: `int:1`, `float:1.5`, `str:x`, `bool:true`, `time:SS`, `field:a`, `bin:=`, `call`. */
function expr(spec: string): Expr {
  const [kind, text = ""] = spec.split(/:(.*)/s);
  switch (kind) {
    case "int": return { kind: "integer", value: BigInt(text) };
    case "float": return { kind: "number", value: Number(text) };
    case "str": return { kind: "string", value: text };
    case "bool": return { kind: "boolean", value: text === "true" };
    case "time": return { kind: "timeUnit", unit: text as "SS" };
    case "field": return { kind: "field", name: text };
    case "bin": return { kind: "binary", op: "=", left: { kind: "field", name: "a" }, right: { kind: "field", name: "b" } };
    default: return { kind: "call", name: "abs", args: [{ kind: "field", name: "a" }] };
  }
}

describe("datetime functions", () => {
  const rows = cases.calls.map((c, i) => [`${c.fn}#${i} ${JSON.stringify(c.args)}`, c] as const);
  test.each(rows)("%s", (_n, c) => {
    const def = lookupBuiltin(c.fn)!;
    const env = { ...testEnv, zone: c.zone ? zone(c.zone) : UTC, now: () => c.now ?? testEnv.now() };
    let got: unknown;
    try {
      got = encode(invoke(def, c.args.map(decode), ctxFor(c.fn, env)));
    } catch (e) {
      if (!(e instanceof RowError)) throw e;
      got = { err: e.message };
    }
    expect(got).toEqual(c.err !== undefined ? { err: c.err } : (c.want as unknown));
  });
});

describe("datetime validators", () => {
  const rows = cases.validators.map((c) => [`${c.fn}(${c.args.join(", ")})`, c] as const);
  test.each(rows)("%s", (_n, c) => {
    const def = lookupBuiltin(c.fn)!;
    expect(def.validate?.(c.args.map(expr))).toBe(c.err);
  });
});
