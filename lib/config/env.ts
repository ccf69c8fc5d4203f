/**
 * eKuiper's environment overrides for yaml files (config-and-cli.md §5): `<PREFIX>__A__B=v` sets
 * key path `a.b`, creating maps as needed; values are typed list → int → bool → float → string.
 */
import { EngineError, ErrCode } from "../errors.ts";

export type Doc = { [key: string]: unknown };

export function isDoc(v: unknown): v is Doc {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A deep copy with every map key lower-cased (eKuiper lowercases kuiper.yaml and confKeys). */
export function lowerKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(lowerKeys);
  if (!isDoc(v)) return v;
  const out: Doc = {};
  for (const [k, x] of Object.entries(v)) out[k.toLowerCase()] = lowerKeys(x);
  return out;
}

const BOOLS: Record<string, boolean> = { t: true, T: true, TRUE: true, true: true, True: true, f: false, F: false, FALSE: false, false: false, False: false };

/** Types one env value the way eKuiper's env manager does (rule 4). */
export function typeEnvValue(raw: string): unknown {
  const s = raw.trim();
  if (s.startsWith("[") && s.endsWith("]")) {
    const inner = s.slice(1, -1);
    return inner === "" ? [] : inner.split(",").map((x) => typeEnvScalar(x));
  }
  return typeEnvScalar(s);
}

function typeEnvScalar(s: string): unknown {
  if (/^[+-]?\d+$/.test(s)) {
    const n = Number(s);
    if (Number.isSafeInteger(n)) return n;
  }
  if (s in BOOLS) return BOOLS[s];
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number(s);
  return s;
}

/**
 * Applies every `<PREFIX>__…` variable of `env` onto `doc` (mutated and returned). Keys are
 * lower-cased; a value whose text holds `=` is ignored, as eKuiper splits on `=` **[quirk]**.
 */
export function applyEnv(doc: Doc, prefix: string, env: Record<string, string | undefined>): Doc {
  const head = prefix.toUpperCase() + "__";
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.startsWith(head) || value.includes("=")) continue;
    const path = name.slice(head.length).split("__").map((p) => p.toLowerCase());
    if (path.some((p) => p === "")) continue;
    let cur = doc;
    for (let i = 0; i < path.length - 1; i++) {
      const k = path[i]!;
      const next = cur[k];
      if (next === undefined || next === null) cur[k] = {};
      else if (!isDoc(next)) throw new EngineError(`environment variable ${name}: ${path.slice(0, i + 1).join(".")} is not a map`, ErrCode.confKey);
      cur = cur[k] as Doc;
    }
    cur[path[path.length - 1]!] = typeEnvValue(value);
  }
  return doc;
}

/** Reads `key` of `doc` case-insensitively (kuiper.yaml matches struct fields that way). */
export function pick(doc: unknown, ...path: string[]): unknown {
  let cur = doc;
  for (const p of path) {
    if (!isDoc(cur)) return undefined;
    const lower = p.toLowerCase();
    let found: unknown;
    for (const k of Object.keys(cur)) if (k.toLowerCase() === lower) found = cur[k];
    cur = found;
  }
  return cur;
}
