/**
 * Named property sets (config-and-cli.md §3, rest-api.md §13): read-only confKeys from the etc
 * yaml files overlaid field by field with KV confKeys (`sources.<type>.<key>`,
 * `sinks.<type>.<key>`, `connections.<type>.<key>`), which the API writes.
 */
import type { Doc } from "../config/index.ts";
import { loadSourceYaml, sourceTypes } from "../connectors/conf-files.ts";
import type { DefinitionStore } from "../store/definition-store.ts";
import { EngineError, ErrCode } from "../errors.ts";
import { DEFINITION_TOO_DEEP, valueTooDeep } from "../value/json-depth.ts";

export type ConfKind = "sources" | "sinks" | "connections";

/** Prop names whose values are secrets: masked as `******` in every listing (rest-api.md §20). */
const SECRET = /^(password|passwd|pass|token|secret|secretkey|accesskey|privatekeyraw|saslpassword|apikey|credential|credentials)$/i;
export const MASK = "******";

export function maskSecrets(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(maskSecrets);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = SECRET.test(k) && typeof x === "string" && x !== "" ? MASK : maskSecrets(x);
    return out;
  }
  return v;
}

/** An update carrying `******` for a secret keeps the stored value. */
export function unmaskSecrets(next: Record<string, unknown>, old: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!old) return next;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(next)) {
    if (v === MASK && SECRET.test(k) && k in old) out[k] = old[k];
    else if (Array.isArray(v) && Array.isArray(old[k])) out[k] = v.map((x, i) => (x && typeof x === "object" && !Array.isArray(x) && (old[k] as unknown[])[i] && typeof (old[k] as unknown[])[i] === "object" ? unmaskSecrets(x as Record<string, unknown>, (old[k] as Record<string, unknown>[])[i]) : x));
    else if (v && typeof v === "object" && !Array.isArray(v) && old[k] && typeof old[k] === "object") out[k] = unmaskSecrets(v as Record<string, unknown>, old[k] as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}

export class ConfKeys {
  private readonly yamlCache = new Map<string, Doc | undefined>();

  constructor(
    private readonly kv: DefinitionStore,
    private readonly etc: string | undefined,
    private readonly env: Record<string, string | undefined>,
    private readonly connectionYaml: Doc,
  ) {}

  /** Loads the source yaml files once (startup). */
  async load(): Promise<void> {
    for (const t of sourceTypes(this.etc)) this.yamlCache.set(t.toLowerCase(), await loadSourceYaml(this.etc, t, this.env));
  }

  sourceTypes(): string[] {
    return [...this.yamlCache.keys()];
  }

  private yaml(kind: ConfKind, type: string): Doc | undefined {
    if (kind === "sources") return this.yamlCache.get(type.toLowerCase());
    if (kind === "connections") {
      const c = this.connectionYaml[type.toLowerCase()];
      return c && typeof c === "object" ? (c as Doc) : undefined;
    }
    return undefined;
  }

  /** KV confKeys of one type: key → props. */
  stored(kind: ConfKind, type: string): Record<string, Record<string, unknown>> {
    const prefix = `${kind}.${type}.`;
    const out: Record<string, Record<string, unknown>> = {};
    for (const [k, v] of this.kv.entries("confKey")) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = JSON.parse(v) as Record<string, unknown>;
    return out;
  }

  /** yaml confKeys overlaid with KV ones; undefined when the type has neither. */
  all(kind: ConfKind, type: string): Record<string, Record<string, unknown>> | undefined {
    const y = this.yaml(kind, type);
    const kv = this.stored(kind, type);
    if (!y && Object.keys(kv).length === 0) return undefined;
    const out: Record<string, Record<string, unknown>> = {};
    for (const [k, v] of Object.entries(y ?? {})) if (v && typeof v === "object") out[k] = { ...(v as Record<string, unknown>) };
    for (const [k, v] of Object.entries(kv)) out[k] = { ...(out[k] ?? {}), ...v };
    return out;
  }

  /** One confKey's effective props (lookup lower-cased first, then exact), or undefined. */
  get(kind: ConfKind, type: string, key: string): Record<string, unknown> | undefined {
    const all = this.all(kind, type);
    return all?.[key.toLowerCase()] ?? all?.[key];
  }

  /** Stores one confKey; props nesting deeper than the JSON limit are refused (they must read back). */
  put(kind: ConfKind, type: string, key: string, props: Record<string, unknown>): void {
    if (valueTooDeep(props)) throw new EngineError(DEFINITION_TOO_DEEP, ErrCode.confKey);
    const full = `${kind}.${type}.${key}`;
    const old = this.kv.get("confKey", full);
    const value = unmaskSecrets(props, old ? (JSON.parse(old) as Record<string, unknown>) : undefined);
    this.kv.set("confKey", full, JSON.stringify(value));
  }

  delete(kind: ConfKind, type: string, key: string): void {
    this.kv.delete("confKey", `${kind}.${type}.${key}`);
  }

  /** Types (of a kind) that have KV confKeys. */
  storedTypes(kind: ConfKind): string[] {
    const types = new Set<string>();
    for (const k of this.kv.keys("confKey")) {
      const [kd, t] = k.split(".");
      if (kd === kind && t) types.add(t);
    }
    return [...types].sort();
  }

  /** Every KV entry (exports): full key → props. */
  entries(): [string, Record<string, unknown>][] {
    return this.kv.entries("confKey").map(([k, v]) => [k, JSON.parse(v) as Record<string, unknown>]);
  }

  clear(): void {
    this.kv.clear("confKey");
  }
}
