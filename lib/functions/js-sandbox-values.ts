/** Values across the sandbox boundary, host side: arguments as JSON text, results back as floe values. */
import { DateTime, Duration, type Value } from "../value/values.ts";

/** A breach of the time or memory limit, or an error thrown by the script. The text has no prefix. */
export class SandboxError extends Error {
  constructor(
    message: string,
    readonly breach: boolean,
  ) {
    super(message);
  }
}

export function fail(message: string, breach = false): never {
  throw new SandboxError(message, breach);
}

/** Host → JSON text. Strings starting with NUL and non-finite numbers are escaped; `special` tells the sandbox to revive them. */
export class ArgEncoder {
  special = false;
  encode(v: Value | undefined): string {
    if (v === null || v === undefined) return "null";
    switch (typeof v) {
      case "boolean":
        return v ? "true" : "false";
      case "bigint":
        return String(Number(v));
      case "number":
        if (Number.isFinite(v)) return String(v);
        this.special = true;
        return Number.isNaN(v) ? '"\\u0000NaN"' : v > 0 ? '"\\u0000+Inf"' : '"\\u0000-Inf"';
      case "string":
        if (v.charCodeAt(0) === 0) {
          this.special = true;
          return JSON.stringify("\u0000" + v);
        }
        return JSON.stringify(v);
    }
    if (v instanceof DateTime) return String(v.ms);
    if (v instanceof Duration) return String(Number(v.ns));
    if (v instanceof Uint8Array) return `[${v.join(",")}]`;
    if (Array.isArray(v)) {
      let s = "[";
      for (let i = 0; i < v.length; i++) s += (i ? "," : "") + this.encode(v[i]);
      return s + "]";
    }
    let s = "{";
    let first = true;
    for (const k of Object.keys(v)) {
      s += (first ? "" : ",") + JSON.stringify(k) + ":" + this.encode(v[k]);
      first = false;
    }
    return s + "}";
  }
}

/** Numbers, booleans and nulls only (what the fast path passes without a conversion). */
export function isPlain(args: readonly (Value | undefined)[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const v = args[i];
    const t = typeof v;
    if (t !== "number" && t !== "bigint" && t !== "boolean" && v !== null && v !== undefined) return false;
  }
  return true;
}

/** Integer-valued results are ints (bigint), as floe's value layer wants; the rest stay floats. */
export function reviveNumber(_k: string, v: unknown): unknown {
  return typeof v === "number" && Number.isInteger(v) && Number.isSafeInteger(v) ? BigInt(v) : v;
}

export function numberValue(v: number): Value {
  if (!Number.isFinite(v)) fail(`result is ${v}`);
  return Number.isInteger(v) && Number.isSafeInteger(v) ? BigInt(v) : v;
}
