/**
 * Moving definitions in and out (rest-api.md §9–§10): the v1 ruleset (streams, tables, rules),
 * the v1 "Configuration" document (full and partial), and the v2 YAML document. Shared by the
 * REST routes, `init.json` at startup and the CLI's import/export verbs.
 */
import { YAML } from "bun";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { DEFINITION_TOO_DEEP, textTooDeep } from "../value/json-depth.ts";
import { clauseExprs, walk } from "../sql/walk.ts";
import { ruleSources } from "../store/stored-rule.ts";
import { jsonUnmarshalError } from "../store/stored-rule.ts";
import { safeUploadPath } from "./uploads-fs.ts";
import { readFileRef } from "./file-ref.ts";
import { goJson } from "./respond.ts";
import { CUSTOM_FORMAT_ERROR } from "../formats/schema-registry.ts";
import { validateId } from "../store/ids.ts";
import type { Engine } from "./engine.ts";

export const CONFIG_KEYS = ["streams", "tables", "rules", "nativePlugins", "portablePlugins", "sourceConfig", "sinkConfig", "connectionConfig", "Service", "Schema", "uploads", "scripts"] as const;
export type ConfigDoc = Record<(typeof CONFIG_KEYS)[number], Record<string, string>>;

export function emptyConfig(): ConfigDoc {
  const o = {} as ConfigDoc;
  for (const k of CONFIG_KEYS) o[k] = {};
  return o;
}

function sorted(o: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k]!;
  return out;
}

// ------------------------------------------------------------------------------------------
// v1 ruleset

/** `{"streams":{…},"tables":{…},"rules":{…}}` of every persistent definition. */
export function exportRuleset(e: Engine): { streams: Record<string, string>; tables: Record<string, string>; rules: Record<string, string> } {
  const streams: Record<string, string> = {};
  const tables: Record<string, string> = {};
  for (const d of e.catalog.all().values()) {
    if (e.catalog.isTemp(d.name)) continue;
    (d.kind === "stream" ? streams : tables)[d.name] = d.statement;
  }
  return { streams: sorted(streams), tables: sorted(tables), rules: Object.fromEntries(e.kv.entries("rule")) };
}

/** Imports a ruleset JSON text; returns the counts of items imported. */
export function importRuleset(e: Engine, text: string, _api = true): { streams: number; tables: number; rules: number } {
  let doc: { streams?: unknown; tables?: unknown; rules?: unknown };
  if (textTooDeep(text)) throw new EngineError(`Import ruleset error: invalid import file: ${DEFINITION_TOO_DEEP}`, ErrCode.undefined);
  const jerr = jsonUnmarshalError(text);
  if (jerr) throw new EngineError(`Import ruleset error: invalid import file: ${jerr}`, ErrCode.undefined);
  doc = JSON.parse(text) as typeof doc;
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw new EngineError(`Import ruleset error: invalid import file: json: cannot unmarshal ${Array.isArray(doc) ? "array" : typeof doc} into Go value of type processor.Ruleset`, ErrCode.undefined);
  const counts = { streams: 0, tables: 0, rules: 0 };
  for (const key of ["streams", "tables"] as const) {
    const m = doc[key];
    if (!m || typeof m !== "object") continue;
    for (const [name, sql] of Object.entries(m as Record<string, unknown>)) {
      try {
        e.catalog.upsert(String(sql));
        counts[key]++;
      } catch (err) {
        e.log(`import ${key} ${name} failed: ${errorText(err)}`);
      }
    }
  }
  const rules = doc.rules;
  if (rules && typeof rules === "object") {
    for (const [id, text] of Object.entries(rules as Record<string, unknown>)) {
      const t = String(text);
      try {
        e.rules.parse(t);
        if (!e.rules.importRule(id, t)) continue;
        e.rules.recover(id, t);
        counts.rules++;
      } catch (err) {
        e.log(`import rule ${id} failed: ${errorText(err)}`);
      }
    }
  }
  return counts;
}

/** `init.json` in `dir` (config-and-cli.md §6.3): imported when its mtime differs from the `initialized<ms>` marker. */
export function importInitJson(e: Engine, dir: string): void {
  const file = join(dir, "init.json");
  if (!existsSync(file)) return;
  const mtime = Math.trunc(statSync(file).mtimeMs);
  const markers = readdirSync(dir).filter((f) => /^initialized\d+$/.test(f));
  if (markers.some((m) => m === `initialized${mtime}`)) return;
  try {
    importRuleset(e, readFileSync(file, "utf8"), false);
  } catch (err) {
    e.log(`init.json import failed: ${errorText(err)}`);
  }
  for (const m of markers) unlinkSync(join(dir, m));
  writeFileSync(join(dir, `initialized${mtime}`), "");
}

// ------------------------------------------------------------------------------------------
// v1 configuration

function configsByType(e: Engine, kind: "sources" | "sinks" | "connections", keep?: (type: string, key: string) => boolean): Record<string, string> {
  const byType: Record<string, Record<string, unknown>> = {};
  for (const [full, props] of e.confKeys.entries()) {
    const [k, type, ...rest] = full.split(".");
    if (k !== kind || !type) continue;
    const key = rest.join(".");
    if (keep && !keep(type, key)) continue;
    (byType[type] ??= {})[key] = props;
  }
  const out: Record<string, string> = {};
  for (const t of Object.keys(byType).sort()) out[t] = JSON.stringify(byType[t]);
  return out;
}

/** The full Configuration, or the part needed by `ruleIds`. */
export function exportConfig(e: Engine, ruleIds?: string[]): ConfigDoc {
  const c = emptyConfig();
  const rs = exportRuleset(e);
  if (!ruleIds) {
    c.streams = rs.streams;
    c.tables = rs.tables;
    c.rules = rs.rules;
    c.sourceConfig = configsByType(e, "sources");
    c.sinkConfig = configsByType(e, "sinks");
  } else {
    const srcKeys = new Set<string>();
    const sinkKeys = new Set<string>();
    const calls = new Set<string>();
    for (const id of ruleIds) {
      const text = e.kv.get("rule", id);
      if (text === undefined) continue;
      c.rules[id] = text;
      let def;
      try {
        def = e.rules.parse(text);
      } catch {
        continue;
      }
      for (const s of ruleSources(def)) {
        const d = e.catalog.get(s);
        if (!d || e.catalog.isTemp(s)) continue;
        (d.kind === "stream" ? c.streams : c.tables)[s] = d.statement;
        // Only a confKey the stream names is a dependency (eKuiper's partial export leaves `default`
        // out), looked up under the stream's literal TYPE: a stream without one (mqtt by default) adds none.
        if (d.options.CONF_KEY && d.options.TYPE) srcKeys.add(`${d.options.TYPE}.${d.options.CONF_KEY.toLowerCase()}`);
      }
      const sel = def.select;
      if (sel) for (const x of [...sel.fields.map((f) => f.expr), ...clauseExprs(sel)]) walk(x, (n) => n.kind === "call" && calls.add(n.name.toLowerCase()));
      for (const a of def.actions) for (const [t, p] of Object.entries(a)) {
        const rid = (p as Record<string, unknown>).resourceId;
        if (typeof rid === "string") sinkKeys.add(`${t}.${rid}`);
      }
    }
    c.streams = sorted(c.streams);
    c.tables = sorted(c.tables);
    c.sourceConfig = configsByType(e, "sources", (t, k) => srcKeys.has(`${t}.${k}`));
    c.sinkConfig = configsByType(e, "sinks", (t, k) => sinkKeys.has(`${t}.${k}`));
    // The scripts the rules call, and no other.
    c.scripts = Object.fromEntries(e.kv.entries("script").filter(([id]) => calls.has(id.toLowerCase())));
  }
  c.connectionConfig = configsByType(e, "connections");
  c.Schema = exportSchemas(e, ruleIds ? schemasOf(e, c) : undefined);
  c.uploads = Object.fromEntries(e.kv.entries("upload"));
  if (!ruleIds) c.scripts = Object.fromEntries(e.kv.entries("script"));
  return c;
}

// ------------------------------------------------------------------------------------------
// schemas (rest-api.md §10.1 `Schema`: "<type>_<name>" → schema info JSON)

/** A registered schema as eKuiper's `schema.Info` (struct order; empty fields omitted). */
function schemaInfo(e: Engine, name: string): { type: string; name: string; content: string; version?: string } {
  const s = e.schemas.get(name)!;
  return s.version ? { type: "protobuf", name, content: s.content, version: s.version } : { type: "protobuf", name, content: s.content };
}

/** `Schema` of the Configuration: every registered schema, or those `only` names. */
function exportSchemas(e: Engine, only?: Set<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of e.schemas.names()) if (!only || only.has(name)) out[`protobuf_${name}`] = goJson(schemaInfo(e, name));
  return out;
}

/** The schemas a partial export's streams (`SCHEMAID`) and rules' actions (`schemaId`) name. */
function schemasOf(e: Engine, c: ConfigDoc): Set<string> {
  const names = new Set<string>();
  const add = (id: unknown) => typeof id === "string" && id.includes(".") && names.add(id.split(".")[0]!);
  for (const n of [...Object.keys(c.streams), ...Object.keys(c.tables)]) add(e.catalog.get(n)?.options.SCHEMAID);
  for (const text of Object.values(c.rules)) {
    try {
      for (const a of e.rules.parse(text).actions) for (const p of Object.values(a)) add((p as Record<string, unknown>).schemaId);
    } catch {
      // an unparsable rule names nothing
    }
  }
  return names;
}

/** Registers one imported schema info (`{"type","name","content"|"file",…}`); throws with the reason. */
async function importSchema(e: Engine, key: string, info: unknown): Promise<void> {
  const i = (info && typeof info === "object" ? info : {}) as Record<string, unknown>;
  const type = typeof i.type === "string" ? i.type : key.split("_")[0];
  const name = typeof i.name === "string" ? i.name : key.slice(key.indexOf("_") + 1);
  if (type === "custom") throw new EngineError(CUSTOM_FORMAT_ERROR, ErrCode.undefined);
  if (type !== "protobuf") throw new EngineError(`schema type ${type} not found`, ErrCode.undefined);
  validateId(name);
  const content = typeof i.content === "string" && i.content ? i.content : await readFileRef(e, String(i.file ?? i.filePath ?? ""));
  e.putSchema(name, content, typeof i.version === "string" ? i.version : "");
}

/** Go's `%v` of a map[string]string: `map[k1:v1 k2:v2]`, keys sorted. */
function goMapText(m: Record<string, string>): string {
  return `map[${Object.keys(m)
    .sort()
    .map((k) => `${k}:${m[k]}`)
    .join(" ")}]`;
}

/** The error maps of the last import (empty maps: success). */
export type ImportStatus = ConfigDoc;

/** An imported definition held as a JSON string: refused when it nests past the limit (it is stored as is). */
function definitionJson(v: string): unknown {
  if (textTooDeep(String(v))) throw new EngineError(DEFINITION_TOO_DEEP, ErrCode.undefined);
  return JSON.parse(v) as unknown;
}

/** Writes an uploads record's file (content or copied file) under the uploads dir. */
export async function saveUpload(e: Engine, name: string, content: string): Promise<string> {
  const path = safeUploadPath(e.uploadsDir, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return path;
}

/** `/data/import`: full (reset first) or partial. Returns the per-item error maps. */
export async function importConfig(e: Engine, text: string, partial: boolean, signal?: AbortSignal, stop = false): Promise<ImportStatus> {
  const status = emptyConfig();
  // The document is read before the reset: eKuiper resets first, so an unreadable document wipes
  // every definition and imports nothing; floe answers the same error and keeps what it had.
  if (textTooDeep(text)) throw new EngineError(`configuration unmarshal with error ${DEFINITION_TOO_DEEP}`, ErrCode.undefined);
  const jerr = jsonUnmarshalError(text);
  if (jerr) throw new EngineError(`configuration unmarshal with error ${jerr}`, ErrCode.undefined);
  const doc = JSON.parse(text) as Partial<Record<string, Record<string, string>>>;
  if (!partial) {
    await e.rules.clear();
    e.catalog.clear();
    for (const id of [...e.scripts.keys()]) e.removeScript(id);
    for (const name of e.schemas.names()) e.removeSchema(name);
    e.confKeys.clear();
    e.kv.clear("upload");
  }
  const m = (k: string) => (doc[k] && typeof doc[k] === "object" ? (doc[k] as Record<string, string>) : {});
  const aborted = () => signal?.aborted === true;
  for (const [name, v] of Object.entries(m("uploads"))) {
    if (aborted()) break;
    try {
      const req = definitionJson(v) as { name?: string; content?: string };
      if (typeof req.content === "string") await saveUpload(e, req.name ?? name, req.content);
      e.kv.set("upload", name, v);
    } catch (err) {
      status.uploads[name] = errorText(err);
    }
  }
  // Schemas: a partial import installs the absent ones; a full import only with `stop=1`, where a
  // failure aborts the import **[quirk]** (without it the document's schemas are ignored).
  if (partial || stop) {
    const failed: Record<string, string> = {};
    for (const [key, v] of Object.entries(m("Schema"))) {
      try {
        const info = definitionJson(v);
        const name = (info as { name?: unknown }).name;
        if (partial && typeof name === "string" && e.schemas.get(name)) continue;
        await importSchema(e, key, info);
      } catch (err) {
        failed[key] = errorText(err);
      }
    }
    if (Object.keys(failed).length) {
      if (!partial) throw new EngineError(`schemaImport Schema import error ${goMapText(failed)}`, ErrCode.undefined);
      status.Schema = failed;
    }
  }
  for (const [id, v] of Object.entries(m("scripts"))) {
    try {
      const def = definitionJson(v) as Record<string, unknown>;
      await e.addScript({ id, description: String(def.description ?? ""), script: String(def.script ?? ""), isAgg: def.isAgg === true });
    } catch (err) {
      status.scripts[id] = errorText(err);
    }
  }
  const configs: [string, "sources" | "sinks" | "connections", keyof ConfigDoc][] = [
    ["sourceConfig", "sources", "sourceConfig"],
    ["sinkConfig", "sinks", "sinkConfig"],
    ["connectionConfig", "connections", "connectionConfig"],
  ];
  for (const [docKey, kind, statusKey] of configs) {
    for (const [type, v] of Object.entries(m(docKey))) {
      try {
        const keys = definitionJson(v) as Record<string, Record<string, unknown>>;
        for (const [k, props] of Object.entries(keys)) e.confKeys.put(kind, type, k, props);
      } catch (err) {
        status[statusKey][type] = errorText(err);
      }
    }
  }
  for (const key of ["streams", "tables"] as const) {
    for (const [name, sql] of Object.entries(m(key))) {
      if (aborted()) break;
      try {
        e.catalog.upsert(sql);
      } catch (err) {
        status[key][name] = errorText(err);
      }
    }
  }
  const imported: [string, string][] = [];
  for (const [id, t] of Object.entries(m("rules"))) {
    if (aborted()) break;
    try {
      const def = e.rules.parse(t);
      if (partial) {
        e.rules.update(id, t);
        continue;
      }
      e.rules.parse(t);
      if (def.id !== id) throw new EngineError("RuleId is not consistent with rule id.", ErrCode.undefined);
      e.kv.set("rule", id, t);
      imported.push([id, t]);
    } catch (err) {
      status.rules[id] = errorText(err);
    }
  }
  for (const [id, t] of imported) e.rules.recover(id, t);
  return status;
}

export function statusFailed(s: ImportStatus): boolean {
  return CONFIG_KEYS.some((k) => Object.keys(s[k]).length > 0);
}

// ------------------------------------------------------------------------------------------
// v2 YAML

/** `GET /v2/data/export`: the YAML document of rest-api.md §10.3. */
export function exportYaml(e: Engine): string {
  const doc: Record<string, unknown> = {};
  const confs = (kind: string) => {
    const out: Record<string, unknown> = {};
    for (const [full, props] of e.confKeys.entries()) if (full.startsWith(kind + ".")) out[full] = props;
    return out;
  };
  const src = confs("sources");
  if (Object.keys(src).length) doc.sourceConfig = src;
  const sink = confs("sinks");
  if (Object.keys(sink).length) doc.sinkConfig = sink;
  const conn = confs("connections");
  if (Object.keys(conn).length) doc.connectionConfig = conn;
  const schema: Record<string, unknown> = {};
  for (const name of e.schemas.names()) schema[`protobuf_${name}`] = schemaInfo(e, name);
  if (Object.keys(schema).length) doc.schema = schema;
  const uploads: Record<string, unknown> = {};
  for (const [k, v] of e.kv.entries("upload")) uploads[k] = JSON.parse(v);
  if (Object.keys(uploads).length) doc.uploads = uploads;
  const rs = exportRuleset(e);
  doc.streams = Object.fromEntries(Object.entries(rs.streams).map(([k, v]) => [k, { sql: v }]));
  if (Object.keys(rs.tables).length) doc.tables = Object.fromEntries(Object.entries(rs.tables).map(([k, v]) => [k, { sql: v }]));
  const rules: Record<string, unknown> = {};
  for (const [id, text] of Object.entries(rs.rules)) {
    try {
      const def = e.rules.parse(text);
      const raw = JSON.parse(text) as Record<string, unknown>;
      rules[id] = { triggered: def.triggered, id, ...raw, options: { ...def.options.raw } };
    } catch {
      rules[id] = JSON.parse(text);
    }
  }
  doc.rules = rules;
  return YAML.stringify(doc, null, 4);
}

/** `POST /v2/data/import`: applies in order, stops at the first failure (prefix `import failed`). */
export async function importYaml(e: Engine, text: string): Promise<void> {
  let doc: Record<string, unknown>;
  try {
    doc = (YAML.parse(text) ?? {}) as Record<string, unknown>;
  } catch (err) {
    throw new EngineError(`import failed: ${errorText(err)}`, ErrCode.undefined);
  }
  const fail = (m: string) => new EngineError(`import failed: ${m}`, ErrCode.undefined);
  const map = (k: string) => (doc[k] && typeof doc[k] === "object" ? (doc[k] as Record<string, unknown>) : {});
  for (const key of ["sourceConfig", "sinkConfig", "connectionConfig"]) {
    for (const [full, props] of Object.entries(map(key))) {
      const [kind, type, ...rest] = full.split(".");
      if (!(kind === "sources" || kind === "sinks" || kind === "connections") || !type || rest.length === 0) throw fail(`${full} isn't valid conf key`);
      try {
        e.confKeys.put(kind, type, rest.join("."), (props ?? {}) as Record<string, unknown>);
      } catch (err) {
        throw fail(`write conf ${full} failed, err:${errorText(err)}`);
      }
    }
  }
  for (const [name, v] of Object.entries(map("uploads"))) {
    const req = (v ?? {}) as { name?: string; content?: string };
    try {
      if (typeof req.content === "string") await saveUpload(e, req.name ?? name, req.content);
      e.kv.set("upload", name, JSON.stringify(req));
    } catch (err) {
      throw fail(`import upload ${name} failed, err:${errorText(err)}`);
    }
  }
  for (const [key, v] of Object.entries(map("schema"))) {
    try {
      await importSchema(e, key, v);
    } catch (err) {
      throw fail(`import schema ${key} failed, err:${errorText(err)}`);
    }
  }
  for (const key of ["streams", "tables"]) {
    for (const [name, v] of Object.entries(map(key))) {
      const sql = typeof v === "string" ? v : String(((v ?? {}) as { sql?: unknown }).sql ?? "");
      try {
        e.catalog.remove(name);
        e.catalog.upsert(sql);
      } catch (err) {
        throw fail(`replace ${key === "streams" ? "stream" : "table"} ${name} failed, err:${errorText(err)}`);
      }
    }
  }
  for (const [id, v] of Object.entries(map("rules"))) {
    try {
      const text = typeof v === "string" ? v : JSON.stringify(v);
      if (e.rules.get(id)) await e.rules.delete(id);
      e.rules.create(text);
    } catch (err) {
      throw fail(`replace rule ${id} failed, err:${errorText(err)}`);
    }
  }
}
