/**
 * Connector property maps decoded the way eKuiper's mapstructure does (rules-and-sinks.md §1.2):
 * keys match case-insensitively, a JSON float into an int field is truncated, strings are never
 * converted to numbers or bools (`1 error(s) decoding: …`), durations are milliseconds or Go
 * duration strings, unknown keys are ignored.
 */
import { EngineError, ErrCode, RowError } from "../errors.ts";
import { goDurationMs } from "../value/duration.ts";

export type Props = Readonly<Record<string, unknown>>;

function goTypeOfJson(v: unknown): string {
  if (v === null) return "<nil>";
  if (Array.isArray(v)) return "[]interface {}";
  switch (typeof v) {
    case "string":
      return "string";
    case "number":
      return Number.isInteger(v) ? "int" : "float64";
    case "boolean":
      return "bool";
    case "bigint":
      return "int64";
  }
  return "map[string]interface {}";
}

function goValueText(v: unknown): string {
  if (Array.isArray(v)) return "[" + v.map(goValueText).join(" ") + "]";
  if (v && typeof v === "object") return "map[" + Object.entries(v).map(([k, x]) => `${k}:${goValueText(x)}`).join(" ") + "]";
  return String(v);
}

/** The mapstructure decode error for one field. */
export function decodeError(key: string, want: string, v: unknown): EngineError {
  return new EngineError(
    `1 error(s) decoding:\n\n* '${key}' expected type '${want}', got unconvertible type '${goTypeOfJson(v)}', value: '${goValueText(v)}'`,
    ErrCode.general,
  );
}

/** Case-insensitive typed reads over a property map. */
export class PropReader {
  private readonly lower = new Map<string, unknown>();
  constructor(readonly props: Props) {
    for (const [k, v] of Object.entries(props)) this.lower.set(k.toLowerCase(), v);
  }

  has(key: string): boolean {
    const v = this.lower.get(key.toLowerCase());
    return v !== undefined && v !== null;
  }

  raw(key: string): unknown {
    return this.lower.get(key.toLowerCase());
  }

  str(key: string, def = ""): string {
    const v = this.raw(key);
    if (v === undefined || v === null) return def;
    if (typeof v === "string") return v;
    throw decodeError(key, "string", v);
  }

  bool(key: string, def = false): boolean {
    const v = this.raw(key);
    if (v === undefined || v === null) return def;
    if (typeof v === "boolean") return v;
    throw decodeError(key, "bool", v);
  }

  /** An integer field; a float is truncated (mapstructure's weak numeric decoding). */
  int(key: string, def = 0, goType = "int"): number {
    const v = this.raw(key);
    if (v === undefined || v === null) return def;
    if (typeof v === "number") return Math.trunc(v);
    if (typeof v === "bigint") return Number(v);
    throw decodeError(key, goType, v);
  }

  float(key: string, def = 0): number {
    const v = this.raw(key);
    if (v === undefined || v === null) return def;
    if (typeof v === "number") return v;
    if (typeof v === "bigint") return Number(v);
    throw decodeError(key, "float64", v);
  }

  /** A duration in milliseconds: a number (ms) or a Go duration string. */
  duration(key: string, defMs = 0): number {
    const v = this.raw(key);
    if (v === undefined || v === null) return defMs;
    if (typeof v === "number") return v;
    if (typeof v === "bigint") return Number(v);
    if (typeof v === "string") {
      try {
        return goDurationMs(v);
      } catch (e) {
        throw new EngineError(e instanceof RowError ? e.message : String(e), ErrCode.general);
      }
    }
    throw decodeError(key, "time.Duration", v);
  }

  strList(key: string): string[] | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
    throw decodeError(key, "[]string", v);
  }

  obj(key: string): Record<string, unknown> | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    if (typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
    throw decodeError(key, "map[string]interface {}", v);
  }
}

/** Later maps win, field by field (confKey merging, config-and-cli.md §3). Keys compare case-insensitively. */
export function mergeProps(...maps: (Props | undefined)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const names = new Map<string, string>();
  for (const m of maps) {
    if (!m) continue;
    for (const [k, v] of Object.entries(m)) {
      const lk = k.toLowerCase();
      const prev = names.get(lk);
      if (prev !== undefined && prev !== k) delete out[prev];
      names.set(lk, k);
      out[k] = v;
    }
  }
  return out;
}
