/**
 * Connector confKey files (config-and-cli.md §3, §4): `etc/mqtt_source.yaml`,
 * `etc/sources/<type>.yaml` and `etc/connections/connection.yaml`, each with its env prefix.
 * When etc has no file for a connector, the content eKuiper ships is used (each connector spec's
 * `confKeys`), so a bare binary behaves like a fresh install.
 */
import { YAML } from "bun";
import { readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { applyEnv, isDoc, lowerKeys, type Doc } from "../config/env.ts";
import { CONNECTORS } from "./index.ts";

/** eKuiper ships this confKey file, though floe has no neuron connector: its confKeys are still listed and managed. */
const SHIPPED_ONLY: Readonly<Record<string, Doc>> = {
  neuron: { default: { url: "tcp://127.0.0.1:7081" } },
};

/** The shipped confKeys per source type (config-and-cli.md §3.1): each connector spec's `confKeys`. */
export const SHIPPED_SOURCES: Readonly<Record<string, Doc>> = Object.assign({}, ...CONNECTORS.map((s) => s.confKeys ?? {}), SHIPPED_ONLY) as Record<string, Doc>;

/**
 * Where floe's defaults differ from the content eKuiper ships (each spec's `floeConfKeys`, by
 * lowercased type), applied only when etc has no file for the connector (a user's file and env
 * vars are honoured as written). `GET /metadata` still reports eKuiper's shipped values.
 */
const FLOE_DEFAULTS = new Map<string, Doc>();
for (const s of CONNECTORS) for (const [t, doc] of Object.entries(s.floeConfKeys ?? {})) FLOE_DEFAULTS.set(t.toLowerCase(), doc);

/** Property names whose camelCase eKuiper restores after lower-casing (from the metadata files). */
const CAMEL = new Map<string, string>();
for (const t of Object.values(SHIPPED_SOURCES)) for (const ck of Object.values(t)) if (isDoc(ck)) for (const k of Object.keys(ck)) CAMEL.set(k.toLowerCase(), k);
for (const k of ["protocolVersion", "clientid", "username", "password", "certificationPath", "privateKeyPath", "rootCaPath", "connectionSelector", "useInt64ForWholeNumber", "enableClientSession", "sessionExpiryIntervalSeconds", "receiveMaximum", "eofMessage", "bufferLength", "decompression", "payloadFormat", "payloadField", "fileName", "responseType", "bodyType"])
  CAMEL.set(k.toLowerCase(), k);
for (const s of CONNECTORS) for (const k of s.camelProps ?? []) CAMEL.set(k.toLowerCase(), k);

/** The env prefix of a source type's file: `MQTT_SOURCE` for mqtt, else the upper-cased type. */
export function sourceEnvPrefix(type: string): string {
  return type.toLowerCase() === "mqtt" ? "MQTT_SOURCE" : type.toUpperCase();
}

/** confKey → props for one source type: file (or shipped) content, env, keys restored. */
export async function loadSourceYaml(etcDir: string | undefined, type: string, env: Record<string, string | undefined> = process.env): Promise<Doc | undefined> {
  const lower = type.toLowerCase();
  const path = etcDir ? (lower === "mqtt" ? join(etcDir, "mqtt_source.yaml") : join(etcDir, "sources", `${type}.yaml`)) : undefined;
  let doc: Doc | undefined;
  if (path && (await Bun.file(path).exists())) {
    const parsed = YAML.parse(await Bun.file(path).text());
    doc = isDoc(parsed) ? parsed : {};
  } else {
    const shipped = Object.entries(SHIPPED_SOURCES).find(([k]) => k.toLowerCase() === lower)?.[1];
    if (!shipped) return undefined;
    doc = structuredClone(shipped);
    const ours = FLOE_DEFAULTS.get(lower);
    if (ours) for (const [ck, props] of Object.entries(ours)) if (isDoc(props) && isDoc(doc[ck])) Object.assign(doc[ck] as Doc, props);
  }
  const lowered = lowerKeys(doc) as Doc;
  applyEnv(lowered, sourceEnvPrefix(type), env);
  const out: Doc = {};
  for (const [ck, props] of Object.entries(lowered)) out[ck] = isDoc(props) ? restoreCase(props) : props;
  return out;
}

function restoreCase(props: Doc): Doc {
  const out: Doc = {};
  for (const [k, v] of Object.entries(props)) out[CAMEL.get(k) ?? k] = v;
  return out;
}

/** Every source type with a yaml file in etc or a shipped default. */
export function sourceTypes(etcDir: string | undefined): string[] {
  const types = new Set(Object.keys(SHIPPED_SOURCES));
  if (etcDir) {
    try {
      for (const f of readdirSync(join(etcDir, "sources"))) if (f.endsWith(".yaml")) types.add(basename(f, ".yaml"));
    } catch {
      // no etc/sources: the shipped set
    }
  }
  return [...types].sort();
}

/** `etc/connections/connection.yaml` after env (`CONNECTION__…`): type → id → props; and its text for hashing. */
export async function loadConnectionYaml(etcDir: string | undefined, env: Record<string, string | undefined> = process.env): Promise<Doc> {
  let doc: Doc = {};
  if (etcDir) {
    const f = Bun.file(join(etcDir, "connections", "connection.yaml"));
    if (await f.exists()) {
      const parsed = YAML.parse(await f.text());
      if (isDoc(parsed)) doc = lowerKeys(parsed) as Doc;
    }
  }
  applyEnv(doc, "CONNECTION", env);
  for (const [t, ids] of Object.entries(doc)) {
    if (!isDoc(ids)) continue;
    for (const [id, props] of Object.entries(ids)) if (isDoc(props)) ids[id] = restoreCase(props);
    doc[t] = ids;
  }
  return doc;
}
